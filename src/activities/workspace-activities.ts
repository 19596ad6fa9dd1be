import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { listWorkspaceFiles } from '../tools/file-tools';
import { withWorkspace } from '../tools/workspace-fs';

/**
 * Creates the workspace and copies the user's acceptance tests into it at the
 * same relative paths, read-only. Returns those paths so no agent may write them.
 */
export async function prepareWorkspace(input: {
  workspace: string;
  testsDir: string | null;
}): Promise<{ protectedPaths: string[] }> {
  await fs.mkdir(input.workspace, { recursive: true });
  if (!input.testsDir) return { protectedPaths: [] };
  let stat;
  try {
    stat = await fs.stat(input.testsDir);
  } catch {
    throw ApplicationFailure.nonRetryable(
      `tests folder ${input.testsDir} does not exist on the worker`,
      'BadRunInput',
    );
  }
  if (!stat.isDirectory())
    throw ApplicationFailure.nonRetryable(`${input.testsDir} is not a folder`, 'BadRunInput');
  const files = await listWorkspaceFiles(input.testsDir, input.testsDir, 10_000);
  // The workspace may hold what an earlier run's code left (links, swapped folders): the copies
  // go through the same link-refusing writes as the file tools, replacing whatever is there.
  await withWorkspace(input.workspace, async (ws) => {
    for (const relative of files) {
      await ws.writeFile(relative, await fs.readFile(path.join(input.testsDir!, relative)), 0o444);
    }
  });
  return { protectedPaths: files };
}

export async function listRunFiles(input: { workspace: string }): Promise<string[]> {
  try {
    return await listWorkspaceFiles(input.workspace, input.workspace, 500);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
