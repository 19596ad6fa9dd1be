import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { withWorkspace } from '../../../src/tools/workspace-fs';

describe('WorkspaceFs', () => {
  let workspace: string;
  let outside: string;
  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-wsfs-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-wsfs-outside-'));
  });
  afterEach(() => {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  test('writes create the folders on the way, leave no temporary file, and set the mode', async () => {
    await withWorkspace(workspace, (ws) => ws.writeFile('a/b/c.txt', 'hello', 0o444));
    expect(fs.readFileSync(path.join(workspace, 'a/b/c.txt'), 'utf8')).toBe('hello');
    expect(fs.statSync(path.join(workspace, 'a/b/c.txt')).mode & 0o777).toBe(0o444);
    expect(fs.readdirSync(path.join(workspace, 'a/b'))).toEqual(['c.txt']);
  });

  test('a write over a link replaces the link and leaves its target alone', async () => {
    fs.writeFileSync(path.join(outside, 'target'), 'outside');
    fs.symlinkSync(path.join(outside, 'target'), path.join(workspace, 'f.txt'));
    await withWorkspace(workspace, (ws) => ws.writeFile('f.txt', 'inside'));
    expect(fs.lstatSync(path.join(workspace, 'f.txt')).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(path.join(workspace, 'f.txt'), 'utf8')).toBe('inside');
    expect(fs.readFileSync(path.join(outside, 'target'), 'utf8')).toBe('outside');
  });

  test('reads stop at the limit and report the whole size', async () => {
    fs.writeFileSync(path.join(workspace, 'big.txt'), 'x'.repeat(1000));
    const { content, size } = await withWorkspace(workspace, (ws) => ws.readFile('big.txt', 10));
    expect([content.length, size]).toEqual([10, 1000]);
  });

  test('reading many files of a folder: regular files only, never through a link, large ones sized only', async () => {
    fs.mkdirSync(path.join(workspace, 'pkg'));
    fs.writeFileSync(path.join(workspace, 'pkg', 'a.py'), 'def a(): pass\n');
    fs.writeFileSync(path.join(workspace, 'pkg', 'big.py'), 'x'.repeat(100));
    fs.writeFileSync(path.join(workspace, 'pkg', 'empty.py'), '');
    fs.writeFileSync(path.join(outside, 'secret.py'), 'SECRET');
    fs.symlinkSync(path.join(outside, 'secret.py'), path.join(workspace, 'pkg', 'link.py'));
    fs.mkdirSync(path.join(workspace, 'pkg', 'sub'));
    fs.symlinkSync(outside, path.join(workspace, 'linked'));
    const read = await withWorkspace(workspace, (ws) =>
      ws.readFilesIn('pkg', ['a.py', 'big.py', 'empty.py', 'link.py', 'sub', 'missing.py', '../x', '..'], 50),
    );
    expect(read.map((r) => (r ? { content: r.content?.toString() ?? null, size: r.size } : null))).toEqual([
      { content: 'def a(): pass\n', size: 14 },
      { content: null, size: 100 },
      { content: '', size: 0 },
      null,
      null,
      null,
      null,
      null,
    ]);
    await expect(
      withWorkspace(workspace, (ws) => ws.readFilesIn('linked', ['secret.py'], 50)),
    ).rejects.toThrow(/symbolic link/);
  });

  test('listing skips links, the given folders, and stays below the asked folder', async () => {
    fs.mkdirSync(path.join(workspace, 'src'));
    fs.mkdirSync(path.join(workspace, 'node_modules'));
    fs.writeFileSync(path.join(workspace, 'src/a.py'), '');
    fs.writeFileSync(path.join(workspace, 'node_modules/x.js'), '');
    fs.writeFileSync(path.join(workspace, 'top.py'), '');
    fs.writeFileSync(path.join(outside, 'secret'), '');
    fs.symlinkSync(outside, path.join(workspace, 'src/escape'));
    const skipped = new Set(['node_modules']);
    expect(await withWorkspace(workspace, (ws) => ws.listFiles('.', 100, skipped))).toEqual([
      'src/a.py',
      'top.py',
    ]);
    expect(await withWorkspace(workspace, (ws) => ws.listFiles('src', 100, skipped))).toEqual(['src/a.py']);
  });

  test.each([['../x'], ['/etc/passwd'], ['a/../../x'], [''], ['a\0b']])(
    'the path %j is refused',
    async (bad) => {
      await expect(withWorkspace(workspace, (ws) => ws.writeFile(bad, 'x'))).rejects.toThrow(/path/);
    },
  );
});
