/**
 * README.md's code map: one line for every folder of `src`, sub-folders included, and no line for
 * a folder that is not there, so the map cannot fall behind a folder split or a move.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** Every folder under `src`, as `src/a/b`; caches Python or tools leave behind are not the code's. */
function srcFolders(rel = 'src'): string[] {
  return fs
    .readdirSync(path.join(ROOT, rel), { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== '__pycache__')
    .flatMap((e) => {
      const folder = `${rel}/${e.name}`;
      return [folder, ...srcFolders(folder)];
    });
}

function codeMapLines(): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const [, after] = readme.split('\n## Code map\n');
  expect(after).toBeDefined();
  const section = after.split('\n## ')[0];
  return [...section.matchAll(/^- `(src\/[^`]+)`: \S/gm)].map((m) => m[1]);
}

test('the code map names every folder of src once, and only folders that exist', () => {
  const listed = codeMapLines();
  expect(listed.length).toBeGreaterThan(10);
  expect([...listed].sort()).toEqual(srcFolders().sort());
});
