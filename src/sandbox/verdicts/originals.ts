import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AcceptanceFiles } from './acceptance';
import type { BaseTests } from './base-tests';

/**
 * The originals, copied for this run into a folder the sandbox user can read (the user's own
 * folder may be private to the worker): the sandbox mounts these copies read-only.
 */
export function copyForSandbox(
  acceptance: Pick<AcceptanceFiles, 'sourceDir' | 'files'>,
  dir: string,
): AcceptanceFiles {
  for (const file of acceptance.files) {
    const target = path.join(dir, file);
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    fs.copyFileSync(path.join(acceptance.sourceDir, file), target);
    fs.chmodSync(target, 0o444);
  }
  return { sourceDir: dir, files: acceptance.files };
}

/** Every file the verdict process judges, as its original, in one folder: what covers the workspace's. */
export function verdictOriginals(
  dir: string,
  acceptance: AcceptanceFiles | undefined,
  base: BaseTests | undefined,
  basePresent: string[],
): AcceptanceFiles {
  if (acceptance) copyForSandbox(acceptance, dir);
  if (base) copyForSandbox({ sourceDir: base.sourceDir, files: basePresent }, dir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  return { sourceDir: dir, files: [...(acceptance?.files ?? []), ...basePresent] };
}

/** The base tests less the acceptance files, which are judged as such. */
export function withoutAcceptance(base: BaseTests, acceptance: AcceptanceFiles | undefined): BaseTests {
  const taken = new Set(acceptance?.files ?? []);
  return { ...base, files: base.files.filter((file) => !taken.has(file)) };
}
