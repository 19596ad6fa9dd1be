import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeBaseTestConfig, writeBaseTestFiles, writeBaseTestHelpers, type BaseTestConfig } from '../repo';
import type { BaseTests } from '../sandbox';
import { targetFile } from '../shared/targets';
import type { Language } from '../shared/types';

/** What the verdict process of one test run trusts, read from a commit the run cannot change. */
export interface TrustedTests {
  /** The commit's conftest.py files and pytest configuration. */
  baseConfig?: BaseTestConfig;
  /** The repository's test files and the targets' files as the base commit has them. */
  baseTests?: BaseTests;
  /** Removes what was written. */
  dispose(): void;
}

export interface TrustedTestsInput {
  language: Language;
  /** The run's git directory shared with its worktrees, where the commits are. */
  commonDir: string | undefined;
  /** A run on a repository: its base commit, whose tests decide targets and regressions. */
  baseCommit?: string | null;
  /** The commit that added the `--tests` files (given on a host that adopted the run). */
  acceptanceCommit?: string | null;
  /** Whether the run has `--tests` files. */
  hasAcceptance: boolean;
  protectedPaths?: string[];
  targets?: string[];
}

/**
 * Writes, for a pytest run, the base commit's configuration and test files to a folder of the
 * worker's: the verdict process loads and judges these, never what the run wrote since.
 */
export async function prepareTrustedTests(input: TrustedTestsInput): Promise<TrustedTests> {
  const commit = input.baseCommit ?? (input.hasAcceptance ? input.acceptanceCommit : null);
  if (input.language !== 'python' || !input.commonDir || !commit) return { dispose: () => undefined };
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-trusted-'));
  const dispose = (): void => fs.rmSync(folder, { recursive: true, force: true });
  try {
    const target = { gitDir: input.commonDir };
    const protectedPaths = input.protectedPaths ?? [];
    const configDir = path.join(folder, 'config');
    const baseConfig = await writeBaseTestConfig(target, commit, configDir, protectedPaths);
    if (!input.baseCommit) return { baseConfig, dispose };
    const testsDir = path.join(folder, 'tests');
    const targetFiles = (input.targets ?? []).map(targetFile).filter((file) => file.endsWith('.py'));
    const files = await writeBaseTestFiles(target, input.baseCommit, testsDir, targetFiles);
    const judged = files.filter((file) => !protectedPaths.includes(file));
    const helpers = judged.length ? await writeBaseTestHelpers(target, input.baseCommit, testsDir) : [];
    return {
      baseConfig,
      ...(judged.length
        ? { baseTests: { sourceDir: testsDir, files: judged, helpers, config: baseConfig } }
        : {}),
      dispose,
    };
  } catch (err) {
    dispose();
    throw err;
  }
}
