/**
 * Puts a run's work tree back to one commit after model-written code has had its hands on it.
 * Nothing found in the work tree is trusted or followed: git runs with the git directory given
 * (git.ts), links are removed as links, and `.git` entries the code planted are deleted before
 * git looks at the tree, so none of them can point git at a repository, hook or config of the
 * code's choosing.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRegularFile } from '../../shared/regular-file';
import { git, type GitTarget } from '../git/git';
import { MAX_POINTER_BYTES, nestedRepositories, removeSpecialFiles, specialFiles } from './run-worktree';

/** Whether the work tree already is `commit` on `branch`: no changes, no untracked files, no planted `.git`. */
export async function workTreeIsAt(
  target: GitTarget & { workTree: string },
  branch: string,
  commit: string,
  linked: boolean,
): Promise<boolean> {
  const head = await git(target, ['symbolic-ref', '--quiet', 'HEAD'], { allowExitCodes: [1, 128] });
  if (head.trim() !== `refs/heads/${branch}`) return false;
  const tip = await git(target, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
    allowExitCodes: [1],
  });
  if (tip.trim() !== commit) return false;
  if (!topGitEntryIsRight(target.workTree, target.gitDir, linked)) return false;
  // A FIFO named .gitignore would hang the status below.
  if (specialFiles(target.workTree).length > 0) return false;
  const status = await git(target, [
    'status',
    '--porcelain',
    '-z',
    '--untracked-files=all',
    '--ignore-submodules=all',
  ]);
  return status === '' && nestedRepositories(target.workTree).length === 0;
}

/**
 * The branch at `commit`, HEAD on the branch, the index and every tracked file written afresh
 * from the commit, untracked files removed.
 */
export async function resetWorkTree(
  target: GitTarget & { workTree: string },
  branch: string,
  commit: string,
  /** emptyFolder: the work tree was made empty by the caller just now, so no file can be stale. */
  options: { linked: boolean; removeIgnored: boolean; emptyFolder?: boolean },
): Promise<void> {
  const { workTree, gitDir } = target;
  makeFoldersWritable(workTree);
  removePlantedGitEntries(workTree);
  removeSpecialFiles(workTree);
  const ref = `refs/heads/${branch}`;
  await git(target, ['update-ref', '--no-deref', ref, commit]);
  await git(target, ['symbolic-ref', 'HEAD', ref]);
  // First from the index aca last wrote: files the commit does not have go, ignored or not.
  await git(target, ['read-tree', '--reset', '-u', commit]);
  if (options.emptyFolder) {
    // Every file was just written from the commit into a folder nothing else has touched.
    if (options.linked) restoreWorktreePointer(workTree, gitDir);
    return;
  }
  // Then from no index: a file changed within the second its entry was written, its size and
  // mtime then set back, matches the entry's stat data (git compares whole seconds of ctime) and
  // would be skipped. With no entries to compare against, every file is written.
  fs.rmSync(path.join(gitDir, 'index'), { force: true });
  await git(target, ['read-tree', '--reset', '-u', commit]);
  await git(target, ['clean', '-f', '-f', '-d', '-q', ...(options.removeIgnored ? ['-x'] : [])]);
  if (options.linked) restoreWorktreePointer(workTree, gitDir);
}

/**
 * `.git` at the top (a linked worktree's pointer, which code could rewrite, or anything planted
 * in a run's own repository) and in every nested folder: git would read them as repositories.
 */
function removePlantedGitEntries(workTree: string): void {
  for (const nested of nestedRepositories(workTree)) {
    fs.rmSync(path.join(workTree, nested, '.git'), { recursive: true, force: true });
  }
  fs.rmSync(path.join(workTree, '.git'), { recursive: true, force: true });
}

/** What `git worktree add` wrote, written again with O_EXCL so no planted link is followed. */
function restoreWorktreePointer(workTree: string, gitDir: string): void {
  const pointer = path.join(workTree, '.git');
  fs.rmSync(pointer, { recursive: true, force: true });
  fs.writeFileSync(pointer, `gitdir: ${gitDir}\n`, { flag: 'wx' });
}

function topGitEntryIsRight(workTree: string, gitDir: string, linked: boolean): boolean {
  let pointer: Buffer | null;
  try {
    // The code under test may have left anything there: a FIFO, a link, a file of gigabytes.
    pointer = readRegularFile(path.join(workTree, '.git'), { maxBytes: MAX_POINTER_BYTES });
  } catch {
    // Not a regular file of a pointer's size, or not readable at all: the reset puts it right.
    return false;
  }
  if (pointer === null) return !linked;
  return linked && pointer.toString('utf8').trim() === `gitdir: ${gitDir}`;
}

/**
 * Folders the code made unwritable (chmod 0555) would stop git from removing what is in them.
 * Only real folders are walked and changed; links are never followed.
 */
export function makeFoldersWritable(workTree: string, limit = 200_000): void {
  const pending = [workTree];
  let seen = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    const stat = fs.lstatSync(dir);
    if ((stat.mode & 0o700) !== 0o700) {
      try {
        fs.chmodSync(dir, stat.mode | 0o700);
      } catch {
        // Not ours to change (another user's folder): git says what it cannot remove.
      }
    }
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (++seen > limit) throw new Error(`the work tree holds more than ${limit} entries`);
      if (entry.isDirectory()) pending.push(path.join(dir, entry.name));
    }
  }
}
