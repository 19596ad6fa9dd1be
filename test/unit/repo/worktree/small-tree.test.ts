/**
 * walkSmallTree: the walk of a work tree bounded by its number of entries, as a commit's size
 * check makes it. It counts what a commit would see, and no more than it must.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { walkSmallTree } from '../../../../src/repo';

/** Whether the whole tree was walked within `limit` entries. */
const hasAtMostEntries = (workTree: string, limit: number): boolean =>
  walkSmallTree(workTree, limit, () => true);
import { tempDirs } from '../../../helpers/temp-dirs';

const tempDir = tempDirs('aca-small-tree-');

function treeWith(files: string[]): string {
  const root = tempDir();
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), '');
  }
  return root;
}

test('counts files and folders at every depth, up to the limit and not one past it', () => {
  // a.py, src/, src/b.py, src/deep/, src/deep/c.py: five entries.
  const root = treeWith(['a.py', 'src/b.py', 'src/deep/c.py']);
  expect(hasAtMostEntries(root, 5)).toBe(true);
  expect(hasAtMostEntries(root, 4)).toBe(false);
});

test("leaves the work tree's own .git out, and only that one", () => {
  const root = treeWith(['a.py', '.git/objects/x', '.git/HEAD', 'sub/.git']);
  // a.py, sub/, sub/.git
  expect(hasAtMostEntries(root, 3)).toBe(true);
  expect(hasAtMostEntries(root, 2)).toBe(false);
});

test('a link counts as one entry and is not followed, even to a large folder or a loop', () => {
  const big = treeWith(Array.from({ length: 50 }, (_, i) => `f${i}`));
  const root = treeWith(['a.py']);
  fs.symlinkSync(big, path.join(root, 'big'));
  fs.symlinkSync(root, path.join(root, 'loop'));
  expect(hasAtMostEntries(root, 3)).toBe(true);
});

test('stops early on a flood, and what cannot be read counts as large', () => {
  const root = treeWith(Array.from({ length: 2_000 }, (_, i) => `flood/f${i}`));
  expect(hasAtMostEntries(root, 100)).toBe(false);
  expect(hasAtMostEntries(path.join(root, 'missing'), 100)).toBe(false);
});
