import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  changedFilesBetween,
  createFreshRunRepository,
  isValidBranchName,
  resolveRepository,
  commitAll,
  createRunWorktree,
  removeRunWorktree,
} from '../../../../src/repo';
import { UserInputError } from '../../../../src/shared/errors';
import { tempDirs } from '../../../helpers/temp-dirs';

const tempDir = tempDirs('aca-repo-test-');

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });
}

function userRepo(files: Record<string, string>): string {
  const dir = tempDir();
  sh(dir, 'init', '--quiet', '--initial-branch=main');
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  sh(dir, 'add', '-A');
  sh(dir, 'commit', '--quiet', '-m', 'first');
  return dir;
}

describe('a run without --repo', () => {
  test('gets a repository of its own, outside the workspace, based on an empty commit', async () => {
    const root = tempDir();
    const options = {
      gitDir: path.join(root, 'git', 'run.git'),
      workTree: path.join(root, 'ws'),
      branch: 'aca/run-1',
    };
    const made = await createFreshRunRepository(options);
    expect(fs.existsSync(path.join(options.workTree, '.git'))).toBe(false);
    expect(sh(root, '--git-dir', options.gitDir, 'ls-tree', '-r', made.baseCommit)).toBe('');
    // A retry finds the same base.
    expect((await createFreshRunRepository(options)).baseCommit).toBe(made.baseCommit);

    fs.writeFileSync(path.join(options.workTree, 'a.py'), 'x = 1\ny = 2\n');
    const head = await commitAll(made, 'aca: attempt 1');
    expect(head).toMatch(/^[0-9a-f]{40}$/);
    expect(await changedFilesBetween(made, made.baseCommit, head!)).toEqual([
      { path: 'a.py', status: 'added', added: 2, removed: 0 },
    ]);
  });
});

describe('a linked run', () => {
  test("without --repo: its repository starts at the earlier run's commit, with that commit's files", async () => {
    const root = tempDir();
    const earlier = await createFreshRunRepository({
      gitDir: path.join(root, 'git', 'earlier'),
      workTree: path.join(root, 'earlier'),
      branch: 'aca/earlier',
    });
    const commitFiles = async (files: Record<string, string>, message: string) => {
      for (const [name, text] of Object.entries(files))
        fs.writeFileSync(path.join(root, 'earlier', name), text);
      return (await commitAll(earlier, message))!;
    };
    const first = await commitFiles({ 'a.py': 'x = 1\n' }, 'aca: attempt 1');
    await commitFiles({ 'a.py': 'x = 2\n', 'b.py': 'y = 1\n' }, 'aca: attempt 2');
    for (const [start, files] of [
      [first, ['a.py']],
      [earlier.baseCommit, []],
    ] as const) {
      const name = start === first ? 'fork-2' : 'fork-1';
      const options = {
        gitDir: path.join(root, 'git', `${name}.git`),
        workTree: path.join(root, name),
        branch: `aca/${name}`,
        from: { commit: start, baseCommit: earlier.baseCommit, parentPlace: earlier },
      };
      const made = await createFreshRunRepository(options);
      expect(made.baseCommit).toBe(earlier.baseCommit);
      expect(sh(root, '--git-dir', options.gitDir, 'rev-parse', options.branch).trim()).toBe(start);
      expect(fs.readdirSync(options.workTree).sort()).toEqual(files);
      if (files.length) expect(fs.readFileSync(path.join(options.workTree, 'a.py'), 'utf8')).toBe('x = 1\n');
      // Nothing left to commit: the index and the files are the start commit's.
      expect(await commitAll(made, 'none')).toBeNull();
      // A retry finds it made, on the same base.
      expect((await createFreshRunRepository(options)).baseCommit).toBe(earlier.baseCommit);
    }
  });

  test("with --repo: its worktree starts at the earlier run's commit, its base the user's commit", async () => {
    const repo = userRepo({ 'a.py': 'x = 0\n' });
    const base = sh(repo, 'rev-parse', 'HEAD').trim();
    const root = tempDir();
    const earlier = await createRunWorktree({
      repoDir: repo,
      workTree: path.join(root, 'earlier'),
      branch: 'aca/earlier',
      base,
    });
    fs.writeFileSync(path.join(root, 'earlier', 'a.py'), 'x = 1\n');
    const commit = (await commitAll(earlier, 'aca: attempt 1'))!;
    const linked = await createRunWorktree({
      repoDir: repo,
      workTree: path.join(root, 'linked'),
      branch: 'aca/linked',
      base,
      start: commit,
    });
    expect(linked.baseCommit).toBe(base);
    expect(fs.readFileSync(path.join(root, 'linked', 'a.py'), 'utf8')).toBe('x = 1\n');
    expect(sh(repo, 'rev-parse', 'aca/linked').trim()).toBe(commit);
    // The user's checkout is where it was.
    expect(fs.readFileSync(path.join(repo, 'a.py'), 'utf8')).toBe('x = 0\n');
    expect(sh(repo, 'rev-parse', 'HEAD').trim()).toBe(base);
  });
});

describe('--repo checks', () => {
  test('a repository, its base commit, the uncommitted-changes warning and .aca.json', async () => {
    const repo = userRepo({ 'a.py': 'x = 1\n', '.aca.json': '{"testCommand": "make test"}' });
    fs.writeFileSync(path.join(repo, 'a.py'), 'x = 2\n');
    fs.mkdirSync(path.join(repo, 'sub'));
    const found = await resolveRepository(path.join(repo, 'sub'), 'HEAD');
    expect(found.topLevel).toBe(fs.realpathSync(repo));
    expect(found.baseCommit).toBe(sh(repo, 'rev-parse', 'HEAD').trim());
    expect(found.uncommittedWarning).toMatch(/1 tracked file\(s\).*uncommitted/);
    expect(found.config.testCommand).toBe('make test');
    expect(found.configWarning).toBeNull();
  });

  test('an uncommitted .aca.json (changed, or never added) is read as committed, with a warning', async () => {
    const changed = userRepo({ 'a.py': 'x = 1\n', '.aca.json': '{"testCommand": "make test"}' });
    fs.writeFileSync(path.join(changed, '.aca.json'), '{"testCommand": "make check"}');
    const found = await resolveRepository(changed, 'HEAD');
    expect(found.config.testCommand).toBe('make test');
    expect(found.configWarning).toBe(
      `warning: .aca.json in ${fs.realpathSync(changed)} has changes that are not committed; the run reads it as committed (commit it for them to count)`,
    );
    const untracked = userRepo({ 'a.py': 'x = 1\n' });
    fs.writeFileSync(path.join(untracked, '.aca.json'), '{"limits": {"memoryMiB": 2048}}');
    const plain = await resolveRepository(untracked, 'HEAD');
    expect(plain.config.limits).toEqual({});
    expect(plain.configWarning).toMatch(/^warning: \.aca\.json in .* has changes that are not committed/);
    expect(plain.uncommittedWarning).toBeNull();
  });

  test.each([
    ['a folder outside any repository', () => tempDir(), 'HEAD', /not in a git work tree/],
    ['an unknown base', () => userRepo({ 'a.txt': 'a' }), 'no-such-branch', /names no commit/],
    [
      'a repository without commits',
      () => {
        const dir = tempDir();
        sh(dir, 'init', '--quiet');
        return dir;
      },
      'HEAD',
      /no commit yet/,
    ],
    [
      'a .aca.json that does not parse',
      () => userRepo({ '.aca.json': '{ testCommand: ' }),
      'HEAD',
      /\.aca\.json is not valid JSON/,
    ],
    [
      'a .aca.json with unknown keys',
      () => userRepo({ '.aca.json': '{"testCmd": "x"}' }),
      'HEAD',
      /unknown key\(s\) testCmd/,
    ],
    [
      'an empty test command in .aca.json',
      () => userRepo({ '.aca.json': '{"testCommand": "  "}' }),
      'HEAD',
      /testCommand: must not be empty/,
    ],
  ])('%s is refused with one clear line', async (_name, make, base, message) => {
    const dir = make();
    const before = fs.existsSync(path.join(dir, '.git')) ? sh(dir, 'status', '--porcelain', '--ignored') : '';
    const error = await resolveRepository(dir, base).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UserInputError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
    if (before) expect(sh(dir, 'status', '--porcelain', '--ignored')).toBe(before);
  });

  test('branch names git refuses are told apart', async () => {
    expect(await isValidBranchName('aca/run-1')).toBe(true);
    expect(await isValidBranchName('aca/bad..name')).toBe(false);
    expect(await isValidBranchName('aca/with space')).toBe(false);
  });
});

describe('many runs of one repository prepared at once', () => {
  // git reads every other worktree's entry while it adds one, and an entry another `worktree add`
  // is still writing reads as broken ("failed to read …/commondir"): an eval batch at concurrency
  // 32 lost an instance to it.
  test('each gets its worktree and branch', async () => {
    const repo = userRepo({ 'a.py': 'x = 1\n' });
    const workRoot = tempDir();
    const count = 24;
    const results = await Promise.allSettled(
      Array.from({ length: count }, (_, i) =>
        createRunWorktree({
          repoDir: repo,
          workTree: path.join(workRoot, `run-${i}`),
          branch: `aca/run-${i}`,
          base: 'main',
        }),
      ),
    );
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
    expect(failures).toEqual([]);
    const branches = sh(repo, 'branch', '--list', 'aca/*', '--format=%(refname:short)')
      .split('\n')
      .filter(Boolean);
    expect(branches.sort()).toEqual(Array.from({ length: count }, (_, i) => `aca/run-${i}`).sort());
    for (let i = 0; i < count; i++) {
      expect(fs.readFileSync(path.join(workRoot, `run-${i}`, 'a.py'), 'utf8')).toBe('x = 1\n');
    }
  });

  test('runs removed while others are added leave the others whole', async () => {
    const repo = userRepo({ 'a.py': 'x = 1\n' });
    const workRoot = tempDir();
    const add = (i: number) =>
      createRunWorktree({
        repoDir: repo,
        workTree: path.join(workRoot, `run-${i}`),
        branch: `aca/run-${i}`,
        base: 'main',
      });
    const first = await Promise.all(Array.from({ length: 12 }, (_, i) => add(i)));
    const results = await Promise.allSettled([
      ...first.map((worktree) => removeRunWorktree(worktree)),
      ...Array.from({ length: 12 }, (_, i) => add(12 + i)),
    ]);
    expect(results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))).toEqual([]);
    const listed = sh(repo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((line) => line.startsWith('worktree '))
      .map((line) => path.basename(line.slice('worktree '.length)))
      .slice(1);
    expect(listed.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `run-${12 + i}`).sort());
  });
});

describe('changedFilesBetween', () => {
  test('status and line counts of each file, names that look like git output read as names', async () => {
    const dir = userRepo({ 'x.txt': 'a\nb\n', 'gone\tname.txt': 'q' });
    const from = sh(dir, 'rev-parse', 'HEAD').trim();
    fs.writeFileSync(path.join(dir, 'x.txt'), 'a\nc\nd\n');
    fs.rmSync(path.join(dir, 'gone\tname.txt'));
    fs.writeFileSync(path.join(dir, 'bin.dat'), Buffer.from([0, 1, 2]));
    // A name shaped like a numstat record, and one like the start of a raw record.
    fs.writeFileSync(path.join(dir, '12\t3\tz'), 'one\n');
    fs.writeFileSync(path.join(dir, ':000000 100644 0 0 A'), 'two\nlines\n');
    sh(dir, 'add', '--all');
    sh(dir, 'commit', '--quiet', '-m', 'change');
    const to = sh(dir, 'rev-parse', 'HEAD').trim();
    const git = { gitDir: path.join(dir, '.git'), commonDir: path.join(dir, '.git'), workTree: dir };
    const changed = await changedFilesBetween(git, from, to);
    expect([...changed].sort((a, b) => a.path.localeCompare(b.path))).toEqual(
      [
        { path: ':000000 100644 0 0 A', status: 'added', added: 2, removed: 0 },
        { path: '12\t3\tz', status: 'added', added: 1, removed: 0 },
        { path: 'bin.dat', status: 'added', added: 0, removed: 0 },
        { path: 'gone\tname.txt', status: 'deleted', added: 0, removed: 1 },
        { path: 'x.txt', status: 'modified', added: 2, removed: 1 },
      ].sort((a, b) => a.path.localeCompare(b.path)),
    );
    expect(await changedFilesBetween(git, from, to, 2)).toHaveLength(2);
  });
});
