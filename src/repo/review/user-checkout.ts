import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';
import { discoverRepository, git, type GitTarget } from '../git/git';

/** The user's own checkout a run's changes are applied to: their main work tree or a linked worktree of theirs. */
export interface UserCheckout {
  topLevel: string;
  /** The checkout's own git directory: `.git`, or `.git/worktrees/<name>` for a linked worktree. */
  gitDir: string;
  /** Where the branches and objects are, shared with every worktree (and the run's). */
  commonDir: string;
}

export function checkoutTarget(checkout: UserCheckout): GitTarget {
  return { gitDir: checkout.gitDir, workTree: checkout.topLevel };
}

function samePath(a: string, b: string): boolean {
  const real = (p: string): string => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return real(a) === real(b);
}

/**
 * The checkout holding `repoDir`. With `expectedCommonDir`, it must share that git directory: the
 * run's commits live there, and a folder that now holds another repository must not receive them.
 */
export async function openUserCheckout(repoDir: string, expectedCommonDir?: string): Promise<UserCheckout> {
  let found;
  try {
    found = await discoverRepository(repoDir);
  } catch {
    throw new UserInputError(`${repoDir} is no longer a git work tree`);
  }
  if (!found.topLevel) throw new UserInputError(`${repoDir} is inside a bare repository`);
  if (expectedCommonDir !== undefined && !samePath(found.commonDir, expectedCommonDir)) {
    throw new UserInputError(
      `${found.topLevel} is not the repository the run was made in (its git directory was ${expectedCommonDir})`,
    );
  }
  return found;
}

/** What git leaves in a checkout's git directory while a merge, rebase and the like wait for the user. */
const OPERATIONS_IN_PROGRESS: Record<string, string> = {
  MERGE_HEAD: 'a merge',
  CHERRY_PICK_HEAD: 'a cherry-pick',
  REVERT_HEAD: 'a revert',
  'rebase-merge': 'a rebase',
  'rebase-apply': 'a rebase or git am',
  BISECT_LOG: 'a bisect',
};

/** Refuses a checkout in the middle of a merge, rebase, …: a commit there would land in the middle of it. */
export function refuseOperationInProgress(checkout: UserCheckout): void {
  for (const [marker, operation] of Object.entries(OPERATIONS_IN_PROGRESS)) {
    if (fs.existsSync(path.join(checkout.gitDir, marker))) {
      throw new UserInputError(
        `${checkout.topLevel} is in the middle of ${operation}; finish or abort it first`,
      );
    }
  }
}

/**
 * The branch checked out and its commit. A detached HEAD is refused: a commit made there belongs
 * to no branch and is easily lost, and HEAD is detached mostly mid-rebase or mid-bisect.
 */
export async function currentBranch(checkout: UserCheckout): Promise<{ branch: string; head: string }> {
  const target = checkoutTarget(checkout);
  const ref = (await git(target, ['symbolic-ref', '--quiet', 'HEAD'], { allowExitCodes: [1] })).trim();
  if (!ref.startsWith('refs/heads/')) {
    throw new UserInputError(
      `HEAD of ${checkout.topLevel} is detached; check out the branch to apply to (git switch <branch>) and try again`,
    );
  }
  const branch = ref.slice('refs/heads/'.length);
  const head = (
    await git(target, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { allowExitCodes: [1] })
  ).trim();
  if (!head) throw new UserInputError(`branch ${branch} of ${checkout.topLevel} has no commit yet`);
  return { branch, head };
}

/**
 * Tracked files whose content differs from HEAD, staged or not. Untracked files do not count: a
 * fast-forward keeps them (or refuses, when one is in the way). Optional locks are off in git(),
 * so this does not rewrite the index.
 */
export async function uncommittedTrackedFiles(checkout: UserCheckout): Promise<string[]> {
  const status = await git(checkoutTarget(checkout), [
    'status',
    '--porcelain=v1',
    '-z',
    '--no-renames',
    '--untracked-files=no',
    '--ignore-submodules=all',
  ]);
  // -z entries: "XY <path>\0"; --no-renames keeps each to one path.
  const files = status
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
  return [...new Set(files)].sort();
}
