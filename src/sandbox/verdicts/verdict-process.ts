import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunnerContext, RunnerPaths } from '../runners/runner';
import type { AcceptanceFiles } from './acceptance';
import { baseHelpers, copyHelpers, type BaseTests } from './base-tests';

/**
 * What the verdict process is given: its key, the files it judges, the conftest.py files given
 * with the acceptance tests, the folders it imports from after the workspace root, and the trusted
 * commit's configuration it loads.
 */
export interface VerdictSpec {
  key: Buffer;
  tests: string[];
  support: string[];
  modules: string[];
  repository: string[];
  importPaths: string[];
  /** The trusted commit's helper modules in its test folders, imported from their originals. */
  helpers: { sourceDir: string; files: string[] };
  base?: NonNullable<AcceptanceFiles['baseConfig']>;
}

const KEY_FILE = 'verdict.key';
const BASE_FOLDER = 'base';
const HELPERS_FOLDER = 'helpers';

/**
 * The verdict process of a run: the acceptance tests and the base commit's tests still present
 * (`basePresent`), those of them the run names (`base.run`) run, the others only read for the
 * classes the run's tests may inherit.
 */
export function verdictSpec(input: {
  key: Buffer;
  acceptance: AcceptanceFiles | undefined;
  acceptanceTests: string[];
  base: BaseTests | undefined;
  basePresent: string[];
  /** The repository's `PYTHONPATH` folders, imported from after the base tests' own. */
  pythonPath?: string[];
}): VerdictSpec {
  const { key, acceptance, acceptanceTests, base, basePresent } = input;
  const baseConfig = acceptance?.baseConfig ?? base?.config;
  return {
    key,
    tests: [...acceptanceTests, ...basePresent.filter((file) => !base?.run || base.run.includes(file))],
    modules: basePresent.filter((file) => base?.run && !base.run.includes(file)),
    repository: basePresent,
    support: (acceptance?.files ?? []).filter((f) => path.posix.basename(f) === 'conftest.py'),
    importPaths: [...new Set([...(base?.importPaths ?? []), ...(input.pythonPath ?? [])])],
    helpers: {
      sourceDir: base?.sourceDir ?? '',
      files: base ? baseHelpers(base, acceptance?.files ?? []) : [],
    },
    ...(baseConfig ? { base: baseConfig } : {}),
  };
}

/**
 * Writes what the verdict process reads into its output folder (fresh for this run, written by the
 * worker only) and returns the runner's view of it. The process finds its key there and removes it
 * before anything of the workspace runs: the key never passes through an environment or a command
 * line another process can read.
 */
export function prepareVerdict(
  spec: VerdictSpec,
  outputDir: string,
  paths: RunnerPaths,
  uid: number | undefined,
  originalsSeen: string,
): NonNullable<RunnerContext['verdict']> {
  const keyFile = path.join(outputDir, KEY_FILE);
  fs.writeFileSync(keyFile, spec.key, { mode: 0o400 });
  if (uid !== undefined) fs.chownSync(keyFile, uid, uid);
  const seen =
    (root: string) =>
    (file: string): [string, string, string] => [
      file,
      path.posix.join(paths.workspace, file),
      path.posix.join(root, file),
    ];
  // The base commit's configuration, copied into a folder of the output folder that only the
  // worker can write; the verdict process reads it before anything of the workspace runs.
  const base = spec.base;
  const baseSeen = path.posix.join(paths.output, BASE_FOLDER);
  if (base) {
    for (const file of base.files) {
      const target = path.join(outputDir, BASE_FOLDER, file);
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
      fs.copyFileSync(path.join(base.sourceDir, file), target);
      fs.chmodSync(target, 0o444);
    }
  }
  const helpers = spec.helpers;
  copyHelpers(helpers, path.join(outputDir, HELPERS_FOLDER));
  const conftests = [
    ...(base?.files ?? [])
      .filter((file) => path.posix.basename(file) === 'conftest.py' && !spec.support.includes(file))
      .map(seen(baseSeen)),
    ...spec.support.map(seen(originalsSeen)),
  ];
  return {
    tests: spec.tests.map(seen(originalsSeen)),
    // Folders above first, as pytest loads them.
    support: conftests.sort((a, b) => a[0].split('/').length - b[0].split('/').length),
    ini: base?.ini ? path.posix.join(baseSeen, base.ini) : null,
    keyFile: path.posix.join(paths.output, KEY_FILE),
    importPaths: spec.importPaths.map((folder) => path.posix.join(paths.workspace, folder)),
    modules: spec.modules.map(seen(originalsSeen)),
    repository: spec.repository,
    helpers: helpers.files.map(seen(path.posix.join(paths.output, HELPERS_FOLDER))),
  };
}
