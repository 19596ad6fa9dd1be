import * as path from 'node:path';
import { pythonPathFolders, testEnvProblem, type TestEnv } from '../../shared/test-env';

/**
 * A runner's environment with the repository's own variables added (`env` of `aca eval --specs`,
 * see shared/test-env.ts): the runner's own values win over a name both set, `PYTHONPATH`'s
 * folders are made absolute from the workspace as the test process sees it and go before aca's
 * entries (pytest_launcher.py keeps workspace folders off the import path until aca's plugin has
 * loaded). A variable the rules refuse stops the run: it reached the sandbox past its checks.
 */
export function withRepositoryEnv(
  runnerEnv: Record<string, string>,
  env: TestEnv | undefined,
  workspaceSeen: string,
): Record<string, string> {
  if (!env || Object.keys(env).length === 0) return runnerEnv;
  const problem = testEnvProblem(env);
  if (problem) throw new Error(`the repository's test environment is refused: ${problem}`);
  const merged: Record<string, string> = { ...runnerEnv };
  for (const [name, value] of Object.entries(env)) {
    if (name === 'PYTHONPATH' || name in runnerEnv) continue;
    merged[name] = value;
  }
  const folders = pythonPathFolders(env).map((folder) => path.posix.join(workspaceSeen, folder));
  if (folders.length > 0) {
    merged.PYTHONPATH = [...folders, ...(runnerEnv.PYTHONPATH ? [runnerEnv.PYTHONPATH] : [])].join(':');
  }
  return merged;
}
