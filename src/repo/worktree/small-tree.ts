import * as fs from 'node:fs';

const SLASH = Buffer.from('/');

/**
 * Walks a work tree of at most `limit` entries (files, folders, links; its top `.git` left out),
 * names as bytes (a name that is not UTF-8 is the entry it names), each entry's kind as `lstat`
 * gives it (a file swapped for a folder after the listing is walked as the folder it now is),
 * links never followed. `visit` sees every entry and may stop the walk by answering false. True
 * when the whole tree was walked; false as soon as it holds more than `limit` entries, when
 * anything in it cannot be read, or when `visit` stopped it. So a tree the code under test
 * flooded costs no more to walk than a small one.
 */
export function walkSmallTree(
  workTree: string,
  limit: number,
  visit: (name: Buffer, stat: fs.Stats) => boolean,
): boolean {
  const top = Buffer.from(workTree);
  const folders = [top];
  let entries = 0;
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let listed: fs.Dirent<Buffer>[];
    try {
      listed = fs.readdirSync(folder, { withFileTypes: true, encoding: 'buffer' });
    } catch {
      return false;
    }
    for (const entry of listed) {
      if (folder === top && entry.name.toString('latin1') === '.git') continue;
      entries += 1;
      if (entries > limit) return false;
      const full = Buffer.concat([folder, SLASH, entry.name]);
      let stat: fs.Stats;
      try {
        stat = fs.lstatSync(full);
      } catch {
        return false;
      }
      if (stat.isDirectory()) folders.push(full);
      if (!visit(entry.name, stat)) return false;
    }
  }
  return true;
}
