import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import {
  GitStorePushRejectedError,
  makeRunRepository,
  pushRunCommit,
  type GitStoreLocation,
  type HostRuns,
  type MadeRunRepository,
  type RunStart,
} from '../repo';
import { runRepositoryHere } from '../eval/store-copies';
import { detectTestCommand, findDependencyFolders, isRoot, lendWorkspaceContents } from '../sandbox';
import { UserInputError } from '../shared/errors';
import type { HostQueues } from '../shared/host-queues';
import type { HostStepInput } from './host-steps';
import type { RepoInput, RunPlace, RunTestSetup } from '../shared/run-types';
import type { ProjectLimits } from '../shared/test-command';
import type { Language, SandboxMode } from '../shared/types';
import type { TestEnv } from '../shared/test-env';
import { withHeartbeats } from './heartbeats';
import { asStoreFailure } from './store-failures';
import { FAILURE_TYPES } from '../shared/failure-types';

export interface RepoActivityDeps {
  /** The identity of the run's commits. */
  gitAuthor: { name: string; email: string };
  sandboxMode: SandboxMode;
  /** Where runs' branches are pushed for every host (ACA_GIT_STORE); null: nowhere. */
  gitStore: GitStoreLocation | null;
  /** The runs whose files are on this host. */
  host: HostRuns;
  /** How long a step of a run's host may wait to start before the run moves (ACA_HOST_START_TIMEOUT). */
  hostStartTimeoutMs?: number;
  /** How long a run's step may go without a heartbeat (ACA_HEARTBEAT_TIMEOUT); absent: each step's own. */
  heartbeatTimeoutMs?: number;
  /** Where this host keeps its copies of eval batches' repositories (its ACA_HOME). */
  evalHome?: string;
}

/** prepareRun may push a large repository's whole history the first time (its limit is ten minutes). */
const PREPARE_PUSH_TIMEOUT_MS = 8 * 60_000;

export interface PrepareRunInput {
  workflowId: string;
  /** `--workspace`: a folder of the preparing host; absent: the host's workspaces root decides. */
  workspace?: string;
  language: Language;
  repo: RepoInput | null;
  testCommand: string | null;
  setupCommand: string | null;
  /** A linked run: the commit its branch starts at, the earlier run's base and git directories. */
  start?: RunStart | null;
  /** Limits given on the command line (`--memory`, `--wall-time`): over `.aca.json`'s. */
  limits?: ProjectLimits;
  /** The repository's own variables for its setup command and tests (RunInput.testEnv). */
  testEnv?: TestEnv;
}

export interface PreparedRun {
  /** Where the run's files are: on the host that took the step. */
  place: RunPlace;
  baseCommit: string;
  /** The commit the branch starts at: the base, or a linked run's start commit. */
  startCommit: string;
  testSetup: RunTestSetup;
  setupCommand: string | null;
  /** Whether the project lets agents run commands (`.aca.json` `tools.runCommand`, default true). */
  runCommand: boolean;
  /** The task queues of the host that took the step (named after its disk, as `place.disk`). */
  queues: HostQueues;
  /** Whether the run can move to another host (a git store is configured). */
  movable: boolean;
  /** How long its host's steps may wait to start before the run moves (ACA_HOST_START_TIMEOUT). */
  hostStartTimeoutMs?: number;
  /** How long the run's steps may go without a heartbeat (ACA_HEARTBEAT_TIMEOUT); absent: each step's own. */
  heartbeatTimeoutMs?: number;
}

function badInput(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, FAILURE_TYPES.badRunInput);
}

export function createRepoActivities(deps: RepoActivityDeps) {
  return {
    /** Runs on the shared queue: the worker that takes it is the host where the run's files will be. */
    async prepareRun(input: PrepareRunInput): Promise<PreparedRun> {
      return withHeartbeats(5_000, async () => {
        // An eval run's repository is named by the batch: this host's copy of it.
        const repo = await runRepositoryHere(input.repo, deps.evalHome, deps.gitStore);
        const prepared = await prepareRun({ ...input, repo }, deps.sandboxMode, deps.gitStore, deps.host);
        return {
          ...prepared,
          ...(deps.hostStartTimeoutMs ? { hostStartTimeoutMs: deps.hostStartTimeoutMs } : {}),
          ...(deps.heartbeatTimeoutMs ? { heartbeatTimeoutMs: deps.heartbeatTimeoutMs } : {}),
        };
      });
    },

    /**
     * Runs on the shared queue when the run's host did not take a step in time: the worker that
     * takes it becomes the run's host, its work tree brought from the store at the recorded commit.
     */
    async adoptRun(input: HostStepInput): Promise<Pick<PreparedRun, 'place' | 'queues'>> {
      return withHeartbeats(5_000, async () => {
        let adopted: RunPlace;
        try {
          adopted = await deps.host.adopt(input.place, input.headCommit);
        } catch (err) {
          throw asStoreFailure(err);
        }
        if (deps.sandboxMode === 'bwrap' && isRoot()) await lendWorkspaceContents(adopted.workTree);
        return { place: adopted, queues: deps.host.queues() };
      });
    },

    /** Answers at once on a live host: tells a host that is busy from one that is gone. */
    hostAlive(): Promise<string> {
      return Promise.resolve(deps.host.disk());
    },
  };
}

/**
 * The prepareRun activity's work: the run's repository, and a root worker's sandbox user given
 * the work tree. That sandbox runs as a uid of the run's own, which the work tree is lent to for
 * the run's life: lent here, as it is made, each test run then only lends what is new. The folder
 * itself stays its owner's: it says whom the workspace goes back to at the run's end.
 */
export async function prepareRun(
  input: PrepareRunInput,
  sandboxMode: SandboxMode,
  gitStore: GitStoreLocation | null,
  host: HostRuns,
): Promise<PreparedRun> {
  const workspace = path.resolve(input.workspace ?? host.workspaceFor(input.workflowId));
  const prepared = await prepareRunRepository(
    { ...input, workspace, disk: host.disk(), gitDir: input.repo ? null : host.gitDirFor(input.workflowId) },
    gitStore,
  );
  if (gitStore) {
    try {
      // The branch as the run starts: the base commit (a linked run's start commit, whose
      // history holds the base), for any worker that runs a later step of it.
      await pushRunCommit(gitStore, prepared.place, prepared.place.branch, prepared.startCommit, null, {
        timeoutMs: PREPARE_PUSH_TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof GitStorePushRejectedError && err.actual) {
        // Workflow ids are unique among running runs: the branch is an ended run's of this id.
        throw ApplicationFailure.create({
          message: `branch ${err.branch} is already in the git store ${err.store} (at ${err.actual}), left by an earlier run of this id: pick another --id or aca discard that run`,
          type: FAILURE_TYPES.gitStorePushRejected,
          nonRetryable: true,
          details: [{ store: err.store, branch: err.branch, expected: null, actual: err.actual }],
        });
      }
      throw asStoreFailure(err);
    }
  }
  if (sandboxMode === 'bwrap' && isRoot()) await lendWorkspaceContents(workspace);
  return { ...prepared, queues: host.queues(), movable: gitStore !== null };
}

/**
 * Makes the run's work tree and branch (a worktree of the user's repository, or a repository of
 * its own) and decides how its tests run, before any code of the run exists: `.aca.json` and the
 * dependency folders are read from the base commit and the user's repository.
 */
export async function prepareRunRepository(
  input: PrepareRunInput & { workspace: string; disk: string; gitDir: string | null },
  gitStore: GitStoreLocation | null = null,
): Promise<Omit<PreparedRun, 'queues' | 'movable'>> {
  let made: MadeRunRepository;
  try {
    made = await makeRunRepository(input, gitStore);
  } catch (err) {
    if (err instanceof UserInputError) throw badInput(err.message);
    throw err;
  }
  const { place, config } = made;
  const dependencies = input.repo ? findDependencyFolders(input.repo.path) : [];
  const testCommandLine = input.testCommand ?? config.testCommand;
  const command = testCommandLine
    ? {
        kind: 'command' as const,
        command: testCommandLine,
        source: input.testCommand ? ('option' as const) : ('config' as const),
        label: testCommandLine,
      }
    : detectTestCommand(place.workTree, input.language, dependencies);
  return {
    place,
    baseCommit: made.baseCommit,
    startCommit: made.startCommit,
    testSetup: {
      command,
      dependencies,
      limits: { ...config.limits, ...input.limits },
      ...(input.testEnv ? { env: input.testEnv } : {}),
    },
    setupCommand: input.setupCommand ?? config.setupCommand,
    runCommand: config.runCommand,
  };
}
