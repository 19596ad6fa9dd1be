import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunPlace } from '../../shared/run-types';
import { git, GitError, type GitTarget } from '../git/git';
import type { GitStoreLocation } from '../git/git-store-location';
import { fetchStoreBranch } from '../git/git-store';
import { GitStoreMissingCommitError, isDiskFull, WorkerDiskFullError } from '../git/git-store-errors';
import { isCommit } from '../git/objects';
import type { StoreCallOptions } from '../git/store-access';
import { resetWorkTree, workTreeIsAt } from './work-tree-reset';

/**
 * Makes `workTree` exactly `commit` of the run's branch (fetched from the store when this worker
 * does not have it), with `gitDir` as its git directory: an existing one (the run's own
 * repository, or its worktree's folder in the user's repository), or, on a worker that never saw
 * the run, a repository of its own made there. Tracked files are rewritten byte for byte,
 * untracked files the last step left are removed (ignored ones are kept unless asked, as a setup
 * command's installs are), and whatever git-like things the code under test planted (a `.git`
 * file or folder, nested repositories, symlinks where the commit has folders) are removed
 * without being followed or run.
 *
 * @returns the run's git directories and work tree on this worker, and whether anything had to change.
 */
export async function bringToCommit(
  store: GitStoreLocation,
  input: {
    workTree: string;
    gitDir: string;
    branch: string;
    commit: string;
    removeIgnored?: boolean;
  } & StoreCallOptions,
): Promise<Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree'> & { fetched: boolean; changed: boolean }> {
  const { workTree, gitDir, branch, commit } = input;
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit)) throw new Error(`"${commit}" is not a full commit id`);
  if (!branch.startsWith('aca/') || /[\s\0~^:?*[\\]|\.\.|@\{/.test(branch)) {
    throw new Error(`"${branch}" is not a run's branch`);
  }
  const madeHere = prepareWorkTreeFolder(workTree);
  const dirs = await openOrCreateRunRepository(gitDir, workTree, branch);
  const common: GitTarget = { gitDir: dirs.commonDir };
  let fetched = false;
  if (!(await isCommit(common, commit))) {
    await fetchStoreBranch(store, dirs.commonDir, branch, input);
    fetched = true;
    if (!(await isCommit(common, commit))) {
      throw new GitStoreMissingCommitError(store.display, branch, commit);
    }
  }
  const linked = dirs.gitDir !== dirs.commonDir;
  try {
    if (!fetched && (await workTreeIsAt(dirs, branch, commit, linked))) {
      return { ...dirs, fetched, changed: false };
    }
    await resetWorkTree(dirs, branch, commit, {
      linked,
      removeIgnored: input.removeIgnored ?? false,
      emptyFolder: madeHere,
    });
  } catch (err) {
    if (err instanceof GitError && isDiskFull(err.stderr))
      throw new WorkerDiskFullError(workTree, err.stderr.trim());
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC')
      throw new WorkerDiskFullError(workTree, (err as Error).message);
    throw err;
  }
  return { ...dirs, fetched, changed: true };
}

/** The work tree's folder, made (empty) when absent: true when this call made it. */
function prepareWorkTreeFolder(workTree: string): boolean {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(workTree);
  } catch {
    stat = undefined;
  }
  if (stat && !stat.isDirectory()) throw new Error(`the run's workspace ${workTree} is not a folder`);
  if (stat) return false;
  fs.mkdirSync(workTree, { recursive: true });
  return true;
}

/**
 * The git directory at `gitDir` as this run's: a worktree's own folder (it has a `commondir`)
 * uses its repository's objects and branches; any other is the run's repository. Made, empty,
 * if absent: the fetch that follows fills it.
 */
async function openOrCreateRunRepository(
  gitDir: string,
  workTree: string,
  branch: string,
): Promise<Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree'>> {
  if (fs.existsSync(path.join(gitDir, 'HEAD'))) {
    const commonFile = path.join(gitDir, 'commondir');
    const commonDir = fs.existsSync(commonFile)
      ? path.resolve(gitDir, fs.readFileSync(commonFile, 'utf8').trim())
      : gitDir;
    return { gitDir, commonDir, workTree };
  }
  fs.mkdirSync(path.dirname(gitDir), { recursive: true, mode: 0o700 });
  try {
    await git({ gitDir }, ['init', '--quiet', '--template=', `--initial-branch=${branch}`]);
  } catch (err) {
    if (err instanceof GitError && isDiskFull(err.stderr))
      throw new WorkerDiskFullError(gitDir, err.stderr.trim());
    throw err;
  }
  return { gitDir, commonDir: gitDir, workTree };
}
