/**
 * Where a committed link leads: read from a commit's tree through git, never from a work tree,
 * and resolved as the kernel would, so that a link that looks inside but passes through another
 * link that leaves counts as leaving.
 */
import { git, gitBytes, type GitTarget } from './git';

/** How many links deep a target is followed before it counts as outside (as the kernel's ELOOP). */
const MAX_LINK_HOPS = 40;

/**
 * Reads the links of `head`'s tree by path. Only the folders a resolution passes through are
 * listed (once each), and only the targets it needs are read: a large repository's whole tree
 * never is.
 */
export function linkReader(target: GitTarget, head: string): (file: string) => Promise<string | undefined> {
  const folders = new Map<string, Map<string, string>>();
  const targets = new Map<string, string>();
  const linksIn = async (folder: string): Promise<Map<string, string>> => {
    let links = folders.get(folder);
    if (links) return links;
    links = new Map();
    // `<commit>:<path>` takes the path as it is; a folder that is missing or not a tree has no links.
    const out = await git(target, ['ls-tree', '-z', `${head}:${folder}`], { allowExitCodes: [128] });
    for (const record of out.split('\0')) {
      const match = /^120000 blob ([0-9a-f]+)\t(.*)$/s.exec(record);
      if (match) links.set(match[2]!, match[1]!);
    }
    folders.set(folder, links);
    return links;
  };
  return async (file) => {
    const slash = file.lastIndexOf('/');
    const blob = (await linksIn(slash < 0 ? '' : file.slice(0, slash))).get(file.slice(slash + 1));
    if (blob === undefined) return undefined;
    if (!targets.has(file))
      targets.set(file, (await gitBytes(target, ['cat-file', 'blob', blob])).toString('utf8'));
    return targets.get(file);
  };
}

/**
 * Whether the link at `linkPath` resolves inside the repository, following the links of the
 * commit it is in as the kernel would: component by component, a link's target in its place.
 */
export async function linkStaysInside(
  linkPath: string,
  linkTarget: string,
  readLink: (file: string) => Promise<string | undefined>,
): Promise<boolean> {
  if (linkTarget.startsWith('/')) return false;
  const parts = linkPath.split('/').slice(0, -1);
  const pending = linkTarget.split('/');
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return false;
      parts.pop();
      continue;
    }
    parts.push(part);
    const next = await readLink(parts.join('/'));
    if (next === undefined) continue;
    if (++hops > MAX_LINK_HOPS || next.startsWith('/')) return false;
    parts.pop();
    pending.unshift(...next.split('/'));
  }
  return true;
}
