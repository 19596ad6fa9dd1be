/**
 * The folder of the repository's files that the user's git runs hooks from. With `core.hooksPath`
 * set to a relative path (husky's `.husky`, a `.githooks` folder), hooks are tracked files: a
 * run that adds or changes one there has written a program the user's next commit or checkout
 * runs, as a link into `.git/hooks` would.
 */
import * as path from 'node:path';
import { readRepoConfig, type GitTarget } from './git';

/** `core.hooksPath` as a folder of the work tree (no leading `./`, no trailing `/`), or null. */
export async function trackedHooksFolder(target: GitTarget): Promise<string | null> {
  const configured = await readRepoConfig(target, 'core.hooksPath');
  // An absolute or home-relative path is outside what a run's commit can hold.
  if (!configured || configured.startsWith('/') || configured.startsWith('~')) return null;
  const folder = path.posix.normalize(configured).replace(/\/+$/, '');
  if (folder === '..' || folder.startsWith('../')) return null;
  return folder === '.' ? '' : folder;
}

/** Whether `file` (a path of the tree) lies in `folder` ('' is the top: every file does). */
export function isInFolder(file: string, folder: string): boolean {
  return folder === '' || file.toLowerCase().startsWith(`${folder.toLowerCase()}/`);
}
