import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { discoverRepository, GitError } from '../repo/git';
import { hasCommitAt } from '../repo/objects';
import type { GitStoreLocation } from '../repo/git-store-location';
import { fetchStoreBranch, pushRunBranchTip, pushRunCommit } from '../repo/git-store';
import type { RunPlaces } from '../repo/run-places';
import { GitStorePushRejectedError } from '../repo/git-store-errors';
import { NO_PROJECT_CONFIG, type ProjectConfig } from '../repo/project-config';
import {
  changedFilesBetween,
  createFreshRunRepository,
  readProjectConfigAt,
  runBranch,
} from '../repo/run-repository';
import { commitAll, createRunWorktree, removeRunWorktree } from '../repo/run-worktree';
import { detectTestCommand, findDependencyFolders } from '../sandbox/detect-test-command';
import { UserInputError } from '../shared/errors';
import type { ChangedFile, RepoInput, RunGit, RunPlace, RunTestSetup } from '../shared/run-types';
import type { ProjectLimits } from '../shared/test-command';
import type { Language, SandboxMode } from '../shared/types';
import { lendWorkspaceContents } from '../sandbox';
import { isRoot } from '../sandbox/tools';
import { withHeartbeats } from './heartbeats';
import { asStoreFailure } from './store-failures';
import { asCommitFailure, commitStep, inRunPlace, warnInActivity } from './run-place-steps';

export interface RepoActivityDeps {
  /** The identity of the run's commits. */
  gitAuthor: { name: string; email: string };
  sandboxMode: SandboxMode;
  /**
   * Where runs' branches are pushed for every worker (ACA_GIT_STORE). Absent: nowhere, as
   * before there was a store (a library user's activities keep working unchanged).
   */
  gitStore?: GitStoreLocation | null;
  /** Where each run's work tree is on this worker (see RunPlaces); absent: the paths as given. */
  places?: RunPlaces;
}

/** commitWork runs as a local activity with a one-minute limit; its push must end well within it. */
const COMMIT_PUSH_TIMEOUT_MS = 40_000;
/** prepareRun may push a large repository's whole history the first time (its limit is ten minutes). */
const PREPARE_PUSH_TIMEOUT_MS = 8 * 60_000;

export interface PrepareRunInput {
  workflowId: string;
  workspace: string;
  language: Language;
  repo: RepoInput | null;
  gitDir: string | null;
  testCommand: string | null;
  setupCommand: string | null;
  /** A linked run: the commit its branch starts at, the earlier run's base and git directories. */
  start?: RunStart | null;
  /** Limits given on the command line (`--memory`, `--wall-time`): over `.aca.json`'s. */
  limits?: ProjectLimits;
}

export interface RunStart {
  commit: string;
  baseCommit: string;
  parentGit: RunGit;
  /** The earlier run's id: with a git store, its branch there holds the start commit. */
  parentRun?: string;
}

export interface PreparedRun {
  git: RunGit;
  branch: string;
  baseCommit: string;
  /** The commit the branch starts at: the base, or a linked run's start commit. */
  startCommit: string;
  testSetup: RunTestSetup;
  setupCommand: string | null;
  /** The id of the disk the run was prepared on (see RunPlaces); '' without places. */
  disk?: string;
}

export interface CommitWorkInput {
  /** Without a place: the run's git locations and branch as they are. */
  git?: RunGit;
  branch?: string;
  message: string;
  /** The run's work tree as recorded: the commit is made in this worker's copy of it. */
  place?: RunPlace;
  /** Names the step in its commit, so a retry recognises a push its first try made. */
  step?: string;
}

function badInput(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, 'BadRunInput');
}

export function createRepoActivities(deps: RepoActivityDeps) {
  return {
    async prepareRun(input: PrepareRunInput): Promise<PreparedRun> {
      return withHeartbeats(5_000, async () => {
        const prepared = await prepareRun(input, deps.sandboxMode, deps.gitStore ?? null);
        const places = deps.places;
        if (!places) return prepared;
        const disk = places.disk();
        places.mark(
          {
            workflowId: input.workflowId,
            branch: prepared.branch,
            commit: prepared.startCommit,
            git: prepared.git,
            disk,
          },
          prepared.startCommit,
        );
        return { ...prepared, disk };
      });
    },

    /**
     * Commits whatever the last step changed and pushes the branch to the git store; the new
     * commit, or null when nothing changed.
     */
    async commitWork(input: CommitWorkInput): Promise<string | null> {
      const { place } = input;
      if (place) {
        return withHeartbeats(5_000, () =>
          inRunPlace(deps.places, place, place.git.workTree, (local) =>
            commitStep(deps.places, place, local, {
              message: input.message,
              step: input.step ?? `commit ${place.commit}`,
              author: deps.gitAuthor,
            }),
          ),
        );
      }
      const { git: runGit, branch } = input;
      if (!runGit || !branch)
        throw badInput('commitWork needs the run place, or its git locations and branch');
      return withHeartbeats(5_000, async () => {
        try {
          const commit = await commitAll(
            { ...runGit, branch, baseCommit: '' },
            input.message,
            deps.gitAuthor,
            undefined,
            warnInActivity,
          );
          if (deps.gitStore)
            await pushRunBranchTip(deps.gitStore, runGit, branch, {
              timeoutMs: COMMIT_PUSH_TIMEOUT_MS,
            });
          return commit;
        } catch (err) {
          throw asCommitFailure(err);
        }
      });
    },

    async describeChanges(input: {
      git: RunGit;
      from: string;
      to: string;
      place?: RunPlace;
    }): Promise<ChangedFile[]> {
      if (!input.place) return changedFilesBetween(input.git, input.from, input.to);
      return inRunPlace(deps.places, input.place, input.git.workTree, (local) =>
        changedFilesBetween(local.git, input.from, input.to),
      );
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
  gitStore: GitStoreLocation | null = null,
): Promise<PreparedRun> {
  const prepared = await prepareRunRepository(input, gitStore);
  if (gitStore) {
    try {
      // The branch as the run starts: the base commit (a linked run's start commit, whose
      // history holds the base), for any worker that runs a later step of it.
      await pushRunCommit(gitStore, prepared.git, prepared.branch, prepared.startCommit, null, {
        timeoutMs: PREPARE_PUSH_TIMEOUT_MS,
      });
    } catch (err) {
      if (err instanceof GitStorePushRejectedError && err.actual) {
        // Workflow ids are unique among running runs: the branch is an ended run's of this id.
        throw ApplicationFailure.create({
          message: `branch ${err.branch} is already in the git store ${err.store} (at ${err.actual}), left by an earlier run of this id: pick another --id or aca discard that run`,
          type: 'GitStorePushRejected',
          nonRetryable: true,
          details: [{ store: err.store, branch: err.branch, expected: null, actual: err.actual }],
        });
      }
      throw asStoreFailure(err);
    }
  }
  // With a store, the run's steps may all run on other hosts: its workspace here is lent by each
  // test run and given back at its end instead (see giveBackOnPreparingDisk).
  if (sandboxMode === 'bwrap' && isRoot() && !gitStore) await lendWorkspaceContents(input.workspace);
  return prepared;
}

/**
 * Makes the run's work tree and branch (a worktree of the user's repository, or a repository of
 * its own) and decides how its tests run, before any code of the run exists: `.aca.json` and the
 * dependency folders are read from the base commit and the user's repository.
 */
export async function prepareRunRepository(
  input: PrepareRunInput,
  gitStore: GitStoreLocation | null = null,
): Promise<PreparedRun> {
  const branch = runBranch(input.workflowId);
  let runGit: RunGit;
  let baseCommit: string;
  let config: ProjectConfig = NO_PROJECT_CONFIG;
  const start = input.start ?? null;
  // A linked run prepared on a host that never held the earlier run: its branch is in the store.
  const fetchEarlierRun =
    gitStore && start?.parentRun
      ? (gitDir: string) => fetchStoreBranch(gitStore, gitDir, runBranch(start.parentRun!))
      : null;
  try {
    if (input.repo && start && fetchEarlierRun) {
      const { commonDir } = await discoverRepository(input.repo.path);
      if (!(await hasCommitAt(commonDir, start.commit))) await fetchEarlierRun(commonDir);
    }
    if (input.repo) {
      const worktree = await freshWorktree(input.repo, input.workspace, branch, input.start?.commit);
      runGit = { gitDir: worktree.gitDir, commonDir: worktree.commonDir, workTree: worktree.workTree };
      baseCommit = worktree.baseCommit;
      config = await readProjectConfigAt({ gitDir: runGit.commonDir }, baseCommit, input.repo.path);
    } else {
      if (!input.gitDir) throw badInput('a run without --repo needs a git directory of its own');
      ({ git: runGit, baseCommit } = await createFreshRunRepository({
        gitDir: input.gitDir,
        workTree: input.workspace,
        branch,
        ...(start
          ? {
              from: {
                ...start,
                ...(fetchEarlierRun && !(await hasCommitAt(start.parentGit.commonDir, start.commit))
                  ? { fetch: fetchEarlierRun }
                  : {}),
              },
            }
          : {}),
      }));
    }
  } catch (err) {
    if (err instanceof UserInputError) throw badInput(err.message);
    throw err;
  }
  const dependencies = input.repo ? findDependencyFolders(input.repo.path) : [];
  const testCommandLine = input.testCommand ?? config.testCommand;
  const command = testCommandLine
    ? {
        kind: 'command' as const,
        command: testCommandLine,
        source: input.testCommand ? ('option' as const) : ('config' as const),
        label: testCommandLine,
      }
    : detectTestCommand(runGit.workTree, input.language, dependencies);
  return {
    git: runGit,
    branch,
    baseCommit,
    startCommit: input.start?.commit ?? baseCommit,
    testSetup: { command, dependencies, limits: { ...config.limits, ...input.limits } },
    setupCommand: input.setupCommand ?? config.setupCommand,
  };
}

/**
 * A worktree on a new branch at the base commit. A retry of this step finds the worktree of its
 * first try (no code has run in it yet) and makes it again; anything else at the path is refused.
 */
async function freshWorktree(repo: RepoInput, workspace: string, branch: string, start?: string) {
  if (fs.existsSync(workspace)) {
    const entries = fs.readdirSync(workspace);
    const ownEarlierTry = entries.includes('.git') && fs.lstatSync(path.join(workspace, '.git')).isFile();
    if (entries.length > 0 && !ownEarlierTry) {
      throw badInput(`the run's worktree path ${workspace} already holds files`);
    }
    if (ownEarlierTry) {
      const { commonDir } = await discoverRepository(repo.path);
      await removeRunWorktree({ commonDir, gitDir: '', workTree: workspace, branch, baseCommit: '' });
    }
  }
  try {
    return await createRunWorktree({
      repoDir: repo.path,
      workTree: workspace,
      branch,
      base: repo.baseCommit,
      ...(start ? { start } : {}),
    });
  } catch (err) {
    if (err instanceof GitError && /already exists/.test(err.stderr)) {
      throw badInput(
        `branch ${branch} already exists in ${repo.path}: pick another --id or aca discard that run`,
      );
    }
    throw err;
  }
}
