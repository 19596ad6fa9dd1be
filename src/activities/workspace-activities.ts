import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { listWorkspaceFiles } from '../tools/file-tools';
import { withWorkspace } from '../tools/workspace-fs';
import type { HostRuns } from '../repo/host-runs';
import type { RunPlace } from '../shared/run-types';
import { withHeartbeats } from './heartbeats';
import { atRecordedCommit, commitStep } from './host-steps';
import { FAILURE_TYPES } from '../shared/failure-types';

export interface PrepareWorkspaceInput {
  testsDir: string | null;
  /** The run's work tree as recorded: the tests are copied into it and committed there. */
  place: RunPlace;
  commitMessage: string;
  /** The workflow execution the step belongs to (see HostRuns.commit). */
  execution: string;
}

export interface WorkspaceActivityDeps {
  host: HostRuns;
}

/** The workspace steps, on the host that has the run's files. */
export function createWorkspaceActivities(deps: WorkspaceActivityDeps) {
  return {
    /**
     * Copies the user's acceptance tests into the work tree at the same relative paths,
     * read-only, and commits them. Returns those paths so no agent may write them.
     */
    async prepareWorkspace(
      input: PrepareWorkspaceInput,
    ): Promise<{ protectedPaths: string[]; commit: string | null }> {
      const { place } = input;
      return withHeartbeats(5_000, () =>
        atRecordedCommit(deps.host, place, async (runGit) => {
          const { protectedPaths } = await copyAcceptanceTests(runGit.workTree, input.testsDir);
          if (protectedPaths.length === 0) return { protectedPaths, commit: null };
          const commit = await commitStep(deps.host, place, {
            message: input.commitMessage,
            step: 'acceptance tests',
            execution: input.execution,
          });
          return { protectedPaths, commit };
        }),
      );
    },

    async listRunFiles(input: { place: RunPlace }): Promise<string[]> {
      return atRecordedCommit(deps.host, input.place, (runGit) =>
        listRunFiles({ workspace: runGit.workTree }),
      );
    },
  };
}

async function copyAcceptanceTests(
  workspace: string,
  testsDir: string | null,
): Promise<{ protectedPaths: string[] }> {
  const input = { workspace, testsDir };
  await fs.mkdir(input.workspace, { recursive: true });
  if (!input.testsDir) return { protectedPaths: [] };
  let stat;
  try {
    stat = await fs.stat(input.testsDir);
  } catch {
    throw ApplicationFailure.nonRetryable(
      `tests folder ${input.testsDir} does not exist on the worker`,
      FAILURE_TYPES.badRunInput,
    );
  }
  if (!stat.isDirectory())
    throw ApplicationFailure.nonRetryable(`${input.testsDir} is not a folder`, FAILURE_TYPES.badRunInput);
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
