/**
 * Folders of a commit laid out as git directories (a bare repository's `HEAD`, `objects`, `refs`,
 * `config`, `hooks` committed as plain files). git run inside one takes it for a repository and
 * reads its `config` and `hooks`, which can name programs to run (`core.fsmonitor`, a hook), so
 * a run's commit that adds or changes one is named for review.
 */
import type { CommitTree } from './link-targets';

/** Names inside a git directory whose change makes the folder above worth a look. */
const GIT_DIR_PARTS = new Set([
  'head',
  'config',
  'commondir',
  'objects',
  'refs',
  'hooks',
  'info',
  'packed-refs',
]);

/**
 * The folder (as latin1 bytes) laid out as a git directory in `tree` that holds the file at
 * `file`, or null. Only a folder right above one of git's own names is looked at, so a change
 * elsewhere lists no tree.
 */
export async function gitDirectoryHolding(file: string, tree: CommitTree): Promise<string | null> {
  const parts = file.split('/');
  for (let i = 1; i < parts.length; i++) {
    if (!GIT_DIR_PARTS.has(parts[i]!.toLowerCase())) continue;
    const folder = parts.slice(0, i);
    if (await tree.isGitDirectory(folder)) return folder.join('/');
  }
  return null;
}
