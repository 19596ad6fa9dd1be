/**
 * Where a committed link leads: read from a commit's tree through git, never from a work tree,
 * and resolved as the kernel would, so that a link that looks inside but passes through another
 * link that leaves counts as leaving.
 *
 * Names are handled as the bytes git stores (each byte one char of a latin1 string), so a name
 * that is not UTF-8 is looked up as itself and never confused with another; trees are walked by
 * their ids, so no name is ever passed to git on a command line.
 */
import { gitBytes, type GitTarget } from './git';
import { treeOf } from './objects';
import { isUnaddableName } from './unaddable-names';

/** How many links deep a target is followed before it counts as outside (as the kernel's ELOOP). */
const MAX_LINK_HOPS = 40;

/** Linux's PATH_MAX, the terminating NUL included: a link's target must be shorter. */
const MAX_TARGET_BYTES = 4096;

/**
 * Where a link leads: into the repository's files; out of them (absolute, up past the top, or
 * too many links deep); or into a git directory, the checkout's own `.git` or a folder laid out as
 * one, whose hooks and config run code that no diff shows; or into the folder of the
 * repository's files that `core.hooksPath` names, where whatever lands is a hook.
 */
export type LinkReach = 'inside' | 'outside' | 'git-dir' | 'hooks';

interface TreeEntry {
  mode: string;
  id: string;
}

/** A commit's tree, read folder by folder as a resolution needs it: a large tree is never listed whole. */
export interface CommitTree {
  /** The entry at `parts` (names as latin1 byte strings), or undefined when there is none. */
  entry(parts: readonly string[]): Promise<TreeEntry | undefined>;
  /** A link's target as its bytes (latin1), or undefined when `parts` is not a link. */
  readLink(parts: readonly string[]): Promise<string | undefined>;
  /** Whether the folder at `parts` is laid out as a git directory. */
  isGitDirectory(parts: readonly string[]): Promise<boolean>;
}

export function commitTree(target: GitTarget, head: string): CommitTree {
  const trees = new Map<string, Map<string, TreeEntry>>();
  const links = new Map<string, string>();
  let root: Promise<string> | null = null;

  const list = async (tree: string): Promise<Map<string, TreeEntry>> => {
    let entries = trees.get(tree);
    if (entries) return entries;
    entries = new Map();
    const out = (await gitBytes(target, ['ls-tree', '-z', '--full-tree', tree])).toString('latin1');
    for (const record of out.split('\0')) {
      const match = /^(\d{6}) [a-z]+ ([0-9a-f]+)\t(.*)$/s.exec(record);
      if (match) entries.set(match[3]!, { mode: match[1]!, id: match[2]! });
    }
    trees.set(tree, entries);
    return entries;
  };

  const entry = async (parts: readonly string[]): Promise<TreeEntry | undefined> => {
    root ??= treeOf(target, head);
    let current: TreeEntry = { mode: '040000', id: await root };
    for (const part of parts) {
      if (current.mode !== '040000') return undefined;
      const next = (await list(current.id)).get(part);
      if (!next) return undefined;
      current = next;
    }
    return current;
  };

  return {
    entry,
    async readLink(parts) {
      const found = await entry(parts);
      if (found?.mode !== '120000') return undefined;
      let text = links.get(found.id);
      if (text === undefined) {
        text = (await gitBytes(target, ['cat-file', 'blob', found.id])).toString('latin1');
        links.set(found.id, text);
      }
      return text;
    },
    async isGitDirectory(parts) {
      const found = await entry(parts);
      if (found?.mode !== '040000') return false;
      return looksLikeGitDirectory(await list(found.id));
    },
  };
}

/**
 * git's own test for a git directory (setup.c `is_git_directory`): a `HEAD`, and `objects` and
 * `refs` folders or a `commondir` file naming where they are (a linked worktree's folder). Letter
 * case is ignored, as a case-insensitive file system would.
 */
function looksLikeGitDirectory(entries: Map<string, TreeEntry>): boolean {
  const names = new Map([...entries].map(([name, e]) => [name.toLowerCase(), e.mode]));
  const isFolder = (name: string) => names.get(name) === '040000';
  return names.has('head') && ((isFolder('objects') && isFolder('refs')) || names.has('commondir'));
}

/** A name git reads as `.git` on some file system (`.GIT`, `git~1`, `.git.`, `.g\u200cit`). */
function isGitName(part: string): boolean {
  return isUnaddableName(Buffer.from(part, 'latin1').toString('utf8'));
}

/**
 * Where the link at `linkPath` (a path of the tree, as latin1 bytes) with target `linkTarget`
 * leads, following the links of the same tree as the kernel would: component by component, a
 * link's target in its place. Passing through a git directory on the way counts as reaching it.
 */
export async function linkReach(
  linkPath: string,
  linkTarget: string,
  tree: CommitTree,
  hooksFolder: string | null = null,
): Promise<LinkReach> {
  const hooks = hooksFolder === null ? null : hooksFolder.toLowerCase();
  // A target the kernel cannot take (PATH_MAX) resolves nowhere: it is not within the repository.
  if (linkTarget.startsWith('/') || linkTarget.length >= MAX_TARGET_BYTES) return 'outside';
  const parts = linkPath.split('/').slice(0, -1);
  const pending = linkTarget.split('/');
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return 'outside';
      parts.pop();
      continue;
    }
    parts.push(part);
    if (isGitName(part)) return 'git-dir';
    if (hooks !== null && (hooks === '' || parts.join('/').toLowerCase() === hooks)) return 'hooks';
    const next = await tree.readLink(parts);
    if (next === undefined) {
      if (await tree.isGitDirectory(parts)) return 'git-dir';
      continue;
    }
    if (++hops > MAX_LINK_HOPS || next.startsWith('/')) return 'outside';
    parts.pop();
    pending.unshift(...next.split('/'));
  }
  return 'inside';
}
