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
import { afterPendingCommit, atRecordedCommit, commitStep, type PendingCommit } from './host-steps';
import { FAILURE_TYPES } from '../shared/failure-types';
import type { OpenTurnInput } from '../agents/turn-context';
import type { TurnOpening } from './agent-activities';

export interface PrepareWorkspaceInput {
  testsDir: string | null;
  /** The run's work tree as recorded: the tests are copied into it and committed there. */
  place: RunPlace;
  commitMessage: string;
  /** The workflow execution the step belongs to (see HostRuns.commit). */
  execution: string;
  /**
   * The run's first turn (the Planner's), opened here once the tests are committed: it saves the
   * run a step on its host. Its protected paths are the ones this step finds.
   */
  openAfter?: TurnOpening;
}

export interface PreparedWorkspace {
  protectedPaths: string[];
  /** The commit of the acceptance tests; null: none given. */
  commit: string | null;
  /** The conversation of openAfter, opened (see OpenedTurn.ref). */
  openedRef?: string;
}

export interface WorkspaceActivityDeps {
  host: HostRuns;
  sandboxMode: SandboxMode;
  /** Opens a turn's conversation (see openTurn in agents/agent-turn.ts); absent: openAfter is ignored. */
  openTurn?: (input: OpenTurnInput) => Promise<unknown>;
}

export interface CloseRunInput {
  /** The run's work tree as recorded. */
  place: RunPlace;
  /** What the last turn left uncommitted (a run stopped after it), committed first. */
  commitFirst?: PendingCommit;
  /** The branch's base: the changes listed are those from it to the run's last commit. */
  baseCommit: string | null;
  /** List the work tree's files too (a run without `--repo`, whose every file is its own). */
  listFiles: boolean;
}

export interface ClosedRun {
  /** The commit this step made (see commitFirst); null: none. */
  commit: string | null;
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
      return withHeartbeats(5_000, () => prepareWorkspaceAt(deps, input));
    },

    /**
     * The run's last step on its host: commits what is left, lists what the run changed (and its
     * files), and gives the files back from the sandbox user a root worker lent them to for the
     * run's life (see workspace-ownership.ts).
     */
    async closeRun(input: CloseRunInput): Promise<ClosedRun> {
      // A large tree takes seconds to list and give back: the beats keep the step from timing out.
      const closed = await withHeartbeats(5_000, () =>
        afterPendingCommit(deps.host, input.place, input.commitFirst, async (runGit, at) => {
          const [files, changedFiles] = await Promise.all([
            input.listFiles ? listRunFiles({ workspace: runGit.workTree }) : null,
            input.baseCommit ? changedFilesBetween(runGit, input.baseCommit, at.commit) : [],
          ]);
          if (deps.sandboxMode === 'bwrap' && isRoot() && existsSync(runGit.workTree)) {
            await releaseWorkspace(runGit.workTree);
          }
          return { files, changedFiles };
        }),
      );
      return { commit: closed.commit, ...closed.result };
    },
  };
}

/**
 * The prepareWorkspace step's work, also done by prepareRun for a run that needs nothing on its
 * host in between (see PrepareRunInput.workspaceStep).
 */
export async function prepareWorkspaceAt(
  deps: Pick<WorkspaceActivityDeps, 'host' | 'openTurn'>,
  input: PrepareWorkspaceInput,
): Promise<PreparedWorkspace> {
  const { place, openAfter } = input;
  return atRecordedCommit(deps.host, place, async (runGit) => {
    const { protectedPaths } = await copyAcceptanceTests(runGit.workTree, input.testsDir);
    const commit =
      protectedPaths.length === 0
        ? null
        : await commitStep(deps.host, place, {
            message: input.commitMessage,
            step: 'acceptance tests',
            execution: input.execution,
          });
    if (!openAfter || !deps.openTurn) return { protectedPaths, commit };
    await deps.openTurn({
      ...openAfter,
      context: { ...openAfter.context, protectedPaths },
      workspace: runGit.workTree,
    });
    return { protectedPaths, commit, openedRef: openAfter.ref };
  });
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
export async function checkTestsFolder(testsDir: string): Promise<void> {
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
