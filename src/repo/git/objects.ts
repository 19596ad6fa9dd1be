import * as fs from 'node:fs';
import { git, type GitTarget } from './git';

/** The tree a commit points at. */
export async function treeOf(target: GitTarget, commit: string): Promise<string> {
  return (
    await git(target, ['rev-parse', '--verify', '--end-of-options', `${commit}^{commit}^{tree}`])
  ).trim();
}

/**
 * Whether `id` is a full commit id present in the repository. Ids come from a run's snapshot: only
 * hex passes, so none can be read as an option or a revision expression.
 */
export async function isCommit(target: GitTarget, id: string): Promise<boolean> {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(id)) return false;
  return (await git(target, ['cat-file', '-t', id], { allowExitCodes: [128] })).trim() === 'commit';
}

/** isCommit in the repository at `gitDir`, which may not exist on this machine (then false). */
export async function hasCommitAt(gitDir: string, id: string): Promise<boolean> {
  return fs.existsSync(gitDir) && isCommit({ gitDir }, id);
}
