/**
 * What a run's commits leave out whatever the work tree holds: bytecode and test runners' caches
 * (a hash-based unchecked .pyc runs without its .py being looked at) and names git refuses to add
 * (`.GIT`, `git~1`…), which used to fail every later commit of the run.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commitAll, createRunWorktree, isUnaddableName, type RunWorktree } from '../../../../src/repo';
import { tempDirs } from '../../../helpers/temp-dirs';
import { makeUserRepo, userGit, writeFiles } from '../../../helpers/run-fixture';

const tempDir = tempDirs('aca-commit-exclusions-');

async function runIn(files: Record<string, string> = { 'calc.py': 'x = 1\n' }): Promise<RunWorktree> {
  const root = tempDir();
  const repo = makeUserRepo(path.join(root, 'repo'), files);
  return createRunWorktree({ repoDir: repo, workTree: path.join(root, 'ws'), branch: 'aca/r', base: 'HEAD' });
}

function committedFiles(worktree: RunWorktree, commit: string): string[] {
  return userGit(worktree.workTree, 'ls-tree', '-r', '--name-only', commit).split('\n').filter(Boolean);
}

describe('bytecode and test caches are never committed', () => {
  const caches = {
    '__pycache__/calc.cpython-311.pyc': 'hidden',
    'pkg/__pycache__/mod.cpython-311.pyc': 'hidden',
    'PKG2/__PYCACHE__/Mod.cpython-311.PYC': 'hidden',
    'loose.pyc': 'hidden',
    'opt.pyo': 'hidden',
    '.pytest_cache/v/cache/lastfailed': '{}',
    '.mypy_cache/3.11/calc.data.json': '{}',
    '.hypothesis/examples/x': 'x',
    'node_modules/.cache/babel/x.json': '{}',
  };

  test('a whole-tree commit leaves them out, even when .gitignore asks for them', async () => {
    const worktree = await runIn();
    writeFiles(worktree.workTree, {
      ...caches,
      '.gitignore': '!*.pyc\n!__pycache__/\n',
      'calc.py': 'x = 2\n',
    });
    const commit = await commitAll(worktree, 'aca: attempt 1');
    expect(commit).not.toBeNull();
    expect(committedFiles(worktree, commit!)).toEqual(['.gitignore', 'calc.py']);
  });

  test('a whole-tree commit with nothing changed, or only caches: null, and the branch stays', async () => {
    const worktree = await runIn();
    const tip = userGit(worktree.workTree, 'rev-parse', 'HEAD').trim();
    expect(await commitAll(worktree, 'aca: attempt 1')).toBeNull();
    writeFiles(worktree.workTree, caches);
    expect(await commitAll(worktree, 'aca: attempt 2')).toBeNull();
    expect(userGit(worktree.workTree, 'rev-parse', 'HEAD').trim()).toBe(tip);
    writeFiles(worktree.workTree, { 'calc.py': 'x = 3\n' });
    const commit = await commitAll(worktree, 'aca: attempt 3');
    expect(commit).toBe(userGit(worktree.workTree, 'rev-parse', 'HEAD').trim());
    expect(commit).not.toBe(tip);
  });

  test("a tool call's commit of a named cache file commits nothing", async () => {
    const worktree = await runIn();
    writeFiles(worktree.workTree, caches);
    expect(await commitAll(worktree, 'aca: tool', undefined, Object.keys(caches))).toBeNull();
  });
});

describe('names git refuses to add', () => {
  test.each([['.GIT/config'], ['.Git/hooks/x'], ['sub/git~1/config'], ['a/.git. /x'], ['GIT~1/x']])(
    'a planted %s is left out with a warning, and every later commit still succeeds',
    async (planted) => {
      const worktree = await runIn();
      writeFiles(worktree.workTree, { [planted]: '[core]\n\tbare = true\n', 'calc.py': 'x = 2\n' });
      const warnings: string[] = [];
      const first = await commitAll(worktree, 'aca: attempt 1', undefined, undefined, (m) =>
        warnings.push(m),
      );
      expect(first).not.toBeNull();
      expect(committedFiles(worktree, first!)).toEqual(['calc.py']);
      const top = planted.split('/').slice(0, planted.startsWith('sub/') || planted.startsWith('a/') ? 2 : 1);
      expect(warnings).toEqual([expect.stringContaining(`left out of the commit: ${top.join('/')}`)]);

      writeFiles(worktree.workTree, { 'calc.py': 'x = 3\n' });
      const second = await commitAll(worktree, 'aca: attempt 2');
      expect(second).not.toBeNull();
      expect(userGit(worktree.workTree, 'show', `${second!}:calc.py`)).toBe('x = 3\n');
      // A tool call's commit naming the planted file itself commits nothing, and does not fail.
      expect(await commitAll(worktree, 'aca: tool', undefined, [planted])).toBeNull();
    },
  );

  /** A path of raw bytes: strings as UTF-8, number arrays as the bytes they list. */
  const bytes = (...parts: Array<string | number[] | Buffer>) =>
    Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p as string))));

  test('names that are not valid UTF-8 are left out too', async () => {
    const worktree = await runIn();
    const top = Buffer.from(worktree.workTree);
    const planted = bytes(top, '/sub/.git:', [0xff, 0xfe], '[x]');
    fs.mkdirSync(planted, { recursive: true });
    fs.writeFileSync(bytes(planted, '/config'), '[core]\n');
    writeFiles(worktree.workTree, { 'calc.py': 'x = 2\n' });
    const warnings: string[] = [];
    const commit = await commitAll(worktree, 'aca: attempt 1', undefined, undefined, (m) => warnings.push(m));
    expect(committedFiles(worktree, commit!)).toEqual(['calc.py']);
    expect(warnings).toHaveLength(1);
  });

  test('a refused name inside a folder whose own name is not valid UTF-8 is found and left out', async () => {
    const worktree = await runIn();
    const planted = bytes(worktree.workTree, '/pkg', [0xff], '/.GIT');
    fs.mkdirSync(planted, { recursive: true });
    fs.writeFileSync(bytes(planted, '/config'), '[core]');
    writeFiles(worktree.workTree, { 'calc.py': 'x = 2\n' });
    const warnings: string[] = [];
    const commit = await commitAll(worktree, 'aca: attempt 1', undefined, undefined, (m) => warnings.push(m));
    expect(committedFiles(worktree, commit!)).toEqual(['calc.py']);
    expect(warnings).toEqual([expect.stringContaining('left out of the commit: pkg\uFFFD/.GIT')]);
  });

  test('a nested repository whose name is not valid UTF-8 is left out, and only it', async () => {
    const worktree = await runIn();
    const nested = bytes(worktree.workTree, '/', [0xff]);
    fs.mkdirSync(bytes(nested, '/.git'), { recursive: true });
    fs.writeFileSync(bytes(nested, '/inner.py'), 'x');
    writeFiles(worktree.workTree, { 'calc.py': 'x = 2\n', 'pkg/new.py': 'y = 1\n' });
    const commit = await commitAll(worktree, 'aca: attempt 1');
    expect(committedFiles(worktree, commit!)).toEqual(['calc.py', 'pkg/new.py']);
  });

  test('a folder whose `.git` is a FIFO is not a nested repository: the FIFO goes, its files are committed', async () => {
    const worktree = await runIn();
    writeFiles(worktree.workTree, { 'sub/a.py': 'a = 1\n', 'calc.py': 'x = 2\n' });
    execFileSync('mkfifo', [path.join(worktree.workTree, 'sub/.git')]);
    const commit = await commitAll(worktree, 'aca: attempt 1');
    expect(committedFiles(worktree, commit!)).toEqual(['calc.py', 'sub/a.py']);
    expect(fs.existsSync(path.join(worktree.workTree, 'sub/.git'))).toBe(false);
  }, 30_000);

  test('FIFOs inside a nested repository and inside a refused folder are removed too', async () => {
    const worktree = await runIn();
    writeFiles(worktree.workTree, {
      'vendor/lib/.git/HEAD': 'ref: refs/heads/main\n',
      '.GIT/x': 'y',
      'calc.py': 'x = 2\n',
    });
    execFileSync('mkfifo', [
      path.join(worktree.workTree, 'vendor/lib/.gitignore'),
      path.join(worktree.workTree, '.GIT/.gitattributes'),
    ]);
    const commit = await commitAll(worktree, 'aca: attempt 1');
    expect(committedFiles(worktree, commit!)).toEqual(['calc.py']);
    expect(fs.existsSync(path.join(worktree.workTree, 'vendor/lib/.gitignore'))).toBe(false);
    expect(fs.existsSync(path.join(worktree.workTree, '.GIT/.gitattributes'))).toBe(false);
  }, 30_000);

  test('a FIFO named .gitignore in a folder whose name is not valid UTF-8 is removed, not left to hang git', async () => {
    const worktree = await runIn();
    execFileSync('python3', [
      '-c',
      "import os, sys; d = sys.argv[1].encode() + b'/\\xff'; os.mkdir(d); os.mkfifo(d + b'/.gitignore')",
      worktree.workTree,
    ]);
    writeFiles(worktree.workTree, { 'calc.py': 'x = 2\n' });
    const commit = await commitAll(worktree, 'aca: attempt 1');
    expect(committedFiles(worktree, commit!)).toEqual(['calc.py']);
  }, 30_000);

  test('the rules match what git itself refuses with core.protectNTFS and core.protectHFS on', () => {
    const repo = tempDir();
    execFileSync('git', ['init', '-q', repo]);
    const empty = execFileSync('git', ['-C', repo, 'hash-object', '-w', '--stdin'], { input: '' })
      .toString()
      .trim();
    const gitRefuses = (name: string, mode: string): boolean => {
      try {
        execFileSync(
          'git',
          [
            '-C',
            repo,
            '-c',
            'core.protectNTFS=true',
            '-c',
            'core.protectHFS=true',
            'update-index',
            '--add',
            '--cacheinfo',
            `${mode},${empty},${name}`,
          ],
          { env: { ...process.env, GIT_INDEX_FILE: path.join(repo, 'probe-index') }, stdio: 'ignore' },
        );
        return false;
      } catch {
        return true;
      } finally {
        fs.rmSync(path.join(repo, 'probe-index'), { force: true });
      }
    };
    const names = [
      '.git',
      '.GIT',
      '.Git',
      '.gIt',
      'git~1',
      'GIT~1',
      'git~2',
      'git~10',
      '.git.',
      '.git ',
      '.git. .',
      '.git..x',
      '.git:x',
      '.git::$INDEX_ALLOCATION',
      'git~1 ',
      'git~1:x',
      'foo\\.git',
      'a\\GIT~1',
      'a\\b',
      '.gitx',
      ' .git',
      'x.git',
      'git',
      '.g\u200cit',
      '.GI\ufeffT',
      '\u200e.git\u200f',
      '.gi\u200ct.',
      '.gitmodules',
      '.GITMODULES',
      'gitmod~1',
      'gitmod~4',
      'gitmod~5',
      'gi7eba~1',
      'gi7eba~9',
      'gi7eb~12',
      '.gitmodules .',
      '.g\u200citmodules',
      '.gitattributes',
      'normal.py',
      '~1',
      'g~1',
    ];
    const mismatches: string[] = [];
    for (const name of names) {
      for (const [mode, isLink] of [
        ['100644', false],
        ['120000', true],
      ] as const) {
        if (gitRefuses(name, mode) !== isUnaddableName(name, isLink))
          mismatches.push(`${JSON.stringify(name)} ${mode}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});
