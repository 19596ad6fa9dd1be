/**
 * A run's repository, made before any code of the run exists: a worktree of the user's
 * repository on a branch of its own, or a repository of the run's own, started at the base
 * commit or at an earlier run's commit (fetched from the git store when this host never held
 * that run). `.aca.json` is read from the base commit and the user's repository, never from a
 * work tree. Input the user got wrong fails as UserInputError before anything is made.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';
import type { RepoInput, RunPlace } from '../../shared/run-types';
import { discoverRepository, GitError } from '../git/git';
import type { GitStoreLocation } from '../git/git-store-location';
import { fetchStoreBranch } from '../git/git-store';
import { hasCommitAt } from '../git/objects';
import { NO_PROJECT_CONFIG, type ProjectConfig } from '../config/project-config';
import { createFreshRunRepository, readProjectConfigAt, runBranch } from './run-repository';
import { createRunWorktree, removeRunWorktree } from './run-worktree';

/** Where a linked run starts: the commit its branch starts at, the earlier run's base and place. */
export interface RunStart {
  commit: string;
  baseCommit: string;
  parentPlace: RunPlace;
  /** The earlier run's id: with a git store, its branch there holds the start commit. */
  parentRun?: string;
}

export interface MadeRunRepository {
  place: RunPlace;
  baseCommit: string;
  /** The commit the branch starts at: the base, or a linked run's start commit. */
  startCommit: string;
  /** The project's `.aca.json` as the base commit has it; NO_PROJECT_CONFIG without `--repo`. */
  config: ProjectConfig;
}

export async function makeRunRepository(
  input: {
    workflowId: string;
    /** The disk id of the host the run is made on. */
    disk: string;
    /** The run's work tree, an absolute path. */
    workspace: string;
    repo: RepoInput | null;
    /** The git directory of a run without `--repo`. */
    gitDir: string | null;
    start?: RunStart | null;
  },
  gitStore: GitStoreLocation | null = null,
): Promise<MadeRunRepository> {
  const { workspace, repo } = input;
  if (repo && isInside(workspace, repo.path)) {
    throw new UserInputError(
      `the run's workspace ${workspace} lies inside the repository ${repo.path}; set ACA_WORKSPACES or --workspace outside it`,
    );
  }
  const branch = runBranch(input.workflowId);
  const start = input.start ?? null;
  // A linked run prepared on a host that never held the earlier run: its branch is in the store.
  const fetchEarlierRun =
    gitStore && start?.parentRun
      ? (gitDir: string) => fetchStoreBranch(gitStore, gitDir, runBranch(start.parentRun!))
      : null;
  if (repo) {
    if (start && fetchEarlierRun) {
      const { commonDir } = await discoverRepository(repo.path);
      if (!(await hasCommitAt(commonDir, start.commit))) await fetchEarlierRun(commonDir);
    }
    const worktree = await freshWorktree(repo, workspace, branch, start?.commit);
    const place: RunPlace = {
      workflowId: input.workflowId,
      branch,
      disk: input.disk,
      gitDir: worktree.gitDir,
      commonDir: worktree.commonDir,
      workTree: worktree.workTree,
    };
    const config = await readProjectConfigAt({ gitDir: place.commonDir }, worktree.baseCommit, repo.path);
    const baseCommit = worktree.baseCommit;
    return { place, baseCommit, startCommit: start?.commit ?? baseCommit, config };
  }
  if (!input.gitDir) throw new UserInputError('a run without --repo needs a git directory of its own');
  const made = await createFreshRunRepository({
    gitDir: input.gitDir,
    workTree: workspace,
    branch,
    ...(start
      ? {
          from: {
            ...start,
            ...(fetchEarlierRun && !(await hasCommitAt(start.parentPlace.commonDir, start.commit))
              ? { fetch: fetchEarlierRun }
              : {}),
          },
        }
      : {}),
  });
  return {
    place: {
      workflowId: input.workflowId,
      branch,
      disk: input.disk,
      gitDir: made.gitDir,
      commonDir: made.commonDir,
      workTree: made.workTree,
    },
    baseCommit: made.baseCommit,
    startCommit: start?.commit ?? made.baseCommit,
    config: NO_PROJECT_CONFIG,
  };
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(path.resolve(parent), child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
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
      throw new UserInputError(`the run's worktree path ${workspace} already holds files`);
    }
    if (ownEarlierTry) {
      const { commonDir } = await discoverRepository(repo.path);
      await removeRunWorktree({ commonDir, workTree: workspace, branch });
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
      throw new UserInputError(
        `branch ${branch} already exists in ${repo.path}: pick another --id or aca discard that run`,
      );
    }
    throw err;
  }
}
