import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { listWorkspaceFiles } from '../tools/file-tools';
import { withWorkspace } from '../tools/workspace-fs';
import { changedFilesBetween, type HostRuns } from '../repo';
import { isRoot, releaseWorkspace } from '../sandbox';
import type { ChangedFile, RunPlace } from '../shared/run-types';
import type { SandboxMode } from '../shared/types';
import { withHeartbeats } from './heartbeats';
import { atRecordedCommit, commitStep } from './host-steps';
import { FAILURE_TYPES } from '../shared/failure-types';

export interface PrepareWorkspaceInput {
  testsDir: string | null;
  /** Where the run's files are: the tests are copied into its work tree and committed there. */
  place: RunPlace;
  /** The run's last recorded commit: the step starts from it. */
  headCommit: string;
  commitMessage: string;
  /** The workflow execution the step belongs to (see HostRuns.commit). */
  execution: string;
}

export interface PreparedWorkspace {
  protectedPaths: string[];
  /** The commit of the acceptance tests; null: none given. */
  commit: string | null;
}

export interface WorkspaceActivityDeps {
  host: HostRuns;
  sandboxMode: SandboxMode;
}

export interface CommitTurnInput {
  /** Where the run's files are: the turn's changes are committed on top of the recorded commit. */
  place: RunPlace;
  /** The run's last recorded commit: the step starts from it. */
  headCommit: string;
  message: string;
  /** Names the commit step, unique within the execution (see HostRuns.commit). */
  step: string;
  /** The workflow execution the step belongs to. */
  execution: string;
}

export interface CloseRunInput {
  /** Where the run's files are. */
  place: RunPlace;
  /** The run's last recorded commit: the step starts from it. */
  headCommit: string;
  /** The branch's base: the changes listed are those from it to the run's last commit. */
  baseCommit: string | null;
  /** List the work tree's files too (a run without `--repo`, whose every file is its own). */
  listFiles: boolean;
}

export interface ClosedRun {
  files: string[] | null;
  changedFiles: ChangedFile[];
}

/** The workspace steps, on the host that has the run's files. */
export function createWorkspaceActivities(deps: WorkspaceActivityDeps) {
  return {
    /**
     * Copies the user's acceptance tests into the work tree at the same relative paths,
     * read-only, and commits them. Returns those paths so no agent may write them.
     */
    async prepareWorkspace(input: PrepareWorkspaceInput): Promise<PreparedWorkspace> {
      return withHeartbeats(5_000, () =>
        atRecordedCommit(deps.host, input, async (place) => {
          const { protectedPaths } = await copyAcceptanceTests(place.workTree, input.testsDir);
          const commit =
            protectedPaths.length === 0
              ? null
              : await commitStep(deps.host, input, {
                  message: input.commitMessage,
                  step: 'acceptance tests',
                  execution: input.execution,
                });
          return { protectedPaths, commit };
        }),
      );
    },

    /**
     * Commits what an agent's turn changed on the run's branch (and pushes it, with a store): the
     * new commit, or null when the turn changed nothing. The work tree is not brought to the
     * recorded commit first: a retry must find the commit its first try made.
     */
    async commitTurn(input: CommitTurnInput): Promise<string | null> {
      // A push to a slow store can take seconds: the beats keep the step from timing out.
      return withHeartbeats(5_000, () =>
        commitStep(deps.host, input, {
          message: input.message,
          step: input.step,
          execution: input.execution,
        }),
      );
    },

    /**
     * The run's last step on its host: lists what the run changed (and its files), and gives the
     * files back from the sandbox user a root worker lent them to for the run's life (see
     * workspace-ownership.ts). Both end the run's use of its work tree.
     */
    async closeRun(input: CloseRunInput): Promise<ClosedRun> {
      // A large tree takes seconds to list and give back: the beats keep the step from timing out.
      return withHeartbeats(5_000, () =>
        atRecordedCommit(deps.host, input, async (place) => {
          const [files, changedFiles] = await Promise.all([
            input.listFiles ? listRunFiles({ workspace: place.workTree }) : null,
            input.baseCommit ? changedFilesBetween(place, input.baseCommit, input.headCommit) : [],
          ]);
          if (deps.sandboxMode === 'bwrap' && isRoot() && existsSync(place.workTree)) {
            await releaseWorkspace(place.workTree);
          }
          return { files, changedFiles };
        }),
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
  await checkTestsFolder(input.testsDir);
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

/** A `--tests` folder this worker cannot read fails the run at once: retrying will not make it. */
async function checkTestsFolder(testsDir: string): Promise<void> {
  let stat;
  try {
    stat = await fs.stat(testsDir);
  } catch {
    throw ApplicationFailure.nonRetryable(
      `tests folder ${testsDir} does not exist on the worker`,
      FAILURE_TYPES.badRunInput,
    );
  }
  if (!stat.isDirectory())
    throw ApplicationFailure.nonRetryable(`${testsDir} is not a folder`, FAILURE_TYPES.badRunInput);
}

export async function listRunFiles(input: { workspace: string }): Promise<string[]> {
  try {
    return await listWorkspaceFiles(input.workspace, input.workspace, 500);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
