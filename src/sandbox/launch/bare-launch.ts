import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runnerFiles } from './runner-files';
import type { RunnerPaths } from '../runners/runner';

/**
 * Paths for a run without a sandbox (ACA_SANDBOX=none). The runners are the
 * same; HOME and TMPDIR point at a private scratch folder that is removed
 * afterwards so even a bare run leaves no files outside the workspace.
 */
export function bareRunnerPaths(
  workspace: string,
  output: string,
): { paths: RunnerPaths; cleanup: () => void } {
  const files = runnerFiles();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bare-run-'));
  return {
    paths: { workspace, runnerDir: files.dir, node: process.execPath, tmp, output },
    cleanup: () => fs.rmSync(tmp, { recursive: true, force: true }),
  };
}
