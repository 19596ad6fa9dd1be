import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Whether the work tree holds at most `limit` entries (files, folders, links; its `.git` left
 * out), counted without following links and stopped as soon as the count passes the limit, so a
 * tree the code under test flooded costs no more to check than a small one. Anything unreadable
 * counts as large: the caller then sends the work to a step that may take its time.
 */
export function hasAtMostEntries(workTree: string, limit: number): boolean {
  let count = 0;
  const folders = [workTree];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return false;
    }
    for (const entry of entries) {
      if (folder === workTree && entry.name === '.git') continue;
      count += 1;
      if (count > limit) return false;
      if (entry.isDirectory()) folders.push(path.join(folder, entry.name));
    }
  }
  return true;
}
