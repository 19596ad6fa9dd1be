import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { listWorkspaceFiles } from '../tools/file-tools';
import { withWorkspace } from '../tools/workspace-fs';
import type { RunPlaces } from '../repo/run-places';
import type { RunPlace } from '../shared/run-types';
import { commitStep, inRunPlace } from './run-place-steps';

/**
 * Creates the workspace and copies the user's acceptance tests into it at the
 * same relative paths, read-only. Returns those paths so no agent may write them.
 */
export async function prepareWorkspace(input: {
  workspace: string;
  testsDir: string | null;
}): Promise<{ protectedPaths: string[] }> {
  return copyAcceptanceTests(input.workspace, input.testsDir);
}

export interface PrepareWorkspaceInput {
  workspace: string;
  testsDir: string | null;
  /** The run's work tree as recorded: the tests are copied into this worker's copy of it. */
  place?: RunPlace;
  /** When given (with a place), the copies are committed with this message, in this activity. */
  commitMessage?: string;
}

export interface WorkspaceActivityDeps {
  places?: RunPlaces;
  gitAuthor?: { name: string; email: string };
}

/** The workspace steps, in this worker's copy of each run's work tree (see RunPlaces). */
export function createWorkspaceActivities(deps: WorkspaceActivityDeps) {
  return {
    async prepareWorkspace(
      input: PrepareWorkspaceInput,
    ): Promise<{ protectedPaths: string[]; commit?: string | null }> {
      const { place } = input;
      if (!place) return copyAcceptanceTests(input.workspace, input.testsDir);
      return inRunPlace(deps.places, place, input.workspace, async (local) => {
        const { protectedPaths } = await copyAcceptanceTests(local.workspace, input.testsDir);
        if (protectedPaths.length === 0 || !input.commitMessage) return { protectedPaths };
        const commit = await commitStep(deps.places, place, local, {
          message: input.commitMessage,
          step: `acceptance tests ${place.commit}`,
          ...(deps.gitAuthor ? { author: deps.gitAuthor } : {}),
        });
        return { protectedPaths, commit };
      });
    },

    async listRunFiles(input: { workspace: string; place?: RunPlace }): Promise<string[]> {
      if (!input.place) return listRunFiles(input);
      return inRunPlace(deps.places, input.place, input.workspace, (local) =>
        listRunFiles({ workspace: local.workspace }),
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
