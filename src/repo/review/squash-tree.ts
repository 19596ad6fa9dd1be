import { git, GitError, type GitTarget } from '../git/git';
import { treeOf } from '../git/objects';

export type SquashTree = { clean: true; tree: string } | { clean: false; conflicts: string[] };

/**
 * The tree `onto` would have with the changes `base`..`head` made on top of it (a three-way merge
 * with `base` as the ancestor, as a squash or cherry-pick does), computed in the object store
 * alone: no working tree, index or ref is read or written.
 *
 * `git merge-tree --merge-base` would say this directly, but it needs git 2.40. Instead two
 * throwaway commits, one holding each side's tree, are made with `base` as their only parent, so
 * their merge base is `base` whatever the history of `onto` is. They are referenced by nothing and
 * go with the next gc.
 */
export async function squashTree(
  target: GitTarget,
  options: { base: string; onto: string; head: string },
): Promise<SquashTree> {
  const side = async (commit: string, label: string): Promise<string> =>
    (
      await git(target, [
        'commit-tree',
        '--no-gpg-sign',
        await treeOf(target, commit),
        '-p',
        options.base,
        '-m',
        `aca apply: ${label}`,
      ])
    ).trim();
  const ours = await side(options.onto, 'your branch');
  const theirs = await side(options.head, 'the run');
  // -z --name-only --no-messages: "<tree>\0", then on conflicts (exit 1) one "<path>\0" per file.
  const args = ['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs];
  let output: string;
  let clean = true;
  try {
    output = await git(target, args);
  } catch (err) {
    // The exit code alone tells clean from conflicted; git() gives the output only when allowed.
    if (!(err instanceof GitError) || err.exitCode !== 1) throw err;
    clean = false;
    output = await git(target, args, { allowExitCodes: [1] });
  }
  const [tree, ...rest] = output.split('\0');
  if (!tree || !/^[0-9a-f]{40,64}$/.test(tree)) {
    throw new Error(`git merge-tree gave no tree: ${output.slice(0, 200)}`);
  }
  if (!clean) return { clean: false, conflicts: [...new Set(rest.filter(Boolean))].sort() };
  return { clean: true, tree };
}
