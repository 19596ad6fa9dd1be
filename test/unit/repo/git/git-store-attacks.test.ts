/**
 * Attacks on the git store's path through a worker: a work tree the code under test left, as
 * commitWork commits and pushes it (commitAll + pushRunBranchTip) and as bringToCommit puts it
 * back on another host. What git-store.test.ts and the sandbox escape tests cover already is not
 * repeated here.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { asStoreFailure } from '../../../../src/activities/store-failures';
import {
  bringToCommit,
  pushRunBranchTip,
  pushRunCommit,
  storeBranchTip,
  WorkerDiskFullError,
  parseGitStoreLocation,
  createFreshRunRepository,
  WorkTreeTooLargeError,
  commitAll,
  type GitStoreLocation,
} from '../../../../src/repo';
import { isRoot } from '../../../../src/sandbox';
import type { RunPlace } from '../../../../src/shared/run-types';
import { tempDirs } from '../../../helpers/temp-dirs';
import { unblockFifos, within } from '../../../helpers/fifo-guards';
import { rawGit } from '../../../helpers/raw-git';

const tempDir = tempDirs('aca-store-attack-');

function write(dir: string, files: Record<string, string | Buffer>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

function bareStore(parent = tempDir()): GitStoreLocation {
  const dir = path.join(parent, 'store.git');
  rawGit(dir, null, 'init', '--bare', '--quiet');
  return parseGitStoreLocation(dir, '/unused');
}

/** A run without --repo on a fresh "host", its base pushed, as prepareRun leaves it. */
async function startRun(store: GitStoreLocation, id: string) {
  const host = tempDir('aca-store-attack-host-');
  const branch = `aca/${id}`;
  const made = await createFreshRunRepository({
    gitDir: path.join(host, 'home', 'git', `${id}.git`),
    workTree: path.join(host, 'workspaces', id),
    branch,
  });
  await pushRunCommit(store, made, branch, made.baseCommit, null);
  return { branch, git: made, base: made.baseCommit };
}

/** commitWork's git part: commit whatever the work tree holds, push the branch's tip. */
async function commitWork(
  store: GitStoreLocation,
  dirs: Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree'>,
  branch: string,
): Promise<string | null> {
  const commit = await commitAll(dirs, 'aca: step');
  await pushRunBranchTip(store, dirs, branch, { timeoutMs: 20_000 });
  return commit;
}

function mkfifo(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  execFileSync('mkfifo', [file]);
}

function mksocket(file: string): void {
  execFileSync('python3', ['-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', file]);
}

/** Every object the store holds, as git would send it to anyone who fetches. */
function allStoreContent(store: GitStoreLocation): string {
  const objects = rawGit(store.url, null, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)')
    .split('\n')
    .filter(Boolean);
  return objects.map((id) => rawGit(store.url, null, 'cat-file', '-p', id)).join('\n');
}

describe('FIFOs and sockets the code under test leaves in the work tree', () => {
  // The hole: git opens .gitignore and .gitattributes with a blocking open(), so a FIFO under
  // either name hung `git add` (and status, clean) for good, holding the run's index.lock, and a
  // tracked file turned into a FIFO failed every retry of the commit. Fixed: they are removed
  // before git looks at the tree (git cannot record them anyway).
  test('commitWork neither hangs nor fails: the tracked file a FIFO replaced is committed as deleted', async () => {
    const store = bareStore();
    const run = await startRun(store, 'fifo');
    const { workTree } = run.git;
    write(workTree, { 'src/app.py': 'x = 1\n', 'src/keep.py': 'y = 2\n', 'pkg/lib.py': 'z = 3\n' });
    const first = (await commitWork(store, run.git, run.branch))!;
    try {
      fs.rmSync(path.join(workTree, 'src', 'app.py'));
      mkfifo(path.join(workTree, 'src', 'app.py'));
      mkfifo(path.join(workTree, '.gitignore'));
      mkfifo(path.join(workTree, 'pkg', '.gitattributes'));
      mkfifo(path.join(workTree, 'deep', 'er', '.gitignore'));
      mksocket(path.join(workTree, 'pkg', 'sock'));
      write(workTree, { 'pkg/new.py': 'w = 4\n' });

      const second = await within(20_000, 'commitWork', commitWork(store, run.git, run.branch));
      expect(second).not.toBeNull();
      expect(await storeBranchTip(store, run.git.commonDir, run.branch)).toBe(second);
      expect(
        rawGit(store.url, null, 'ls-tree', '-r', '--name-only', second!).split('\n').filter(Boolean),
      ).toEqual(['pkg/lib.py', 'pkg/new.py', 'src/keep.py']);
      expect(rawGit(store.url, null, 'rev-parse', `${second}^`).trim()).toBe(first);
      // The run's repository is not left locked.
      expect(fs.existsSync(path.join(run.git.gitDir, 'index.lock'))).toBe(false);
    } finally {
      unblockFifos(workTree);
    }
  }, 60_000);

  test('bringToCommit over a work tree full of FIFOs finishes and leaves exactly the commit', async () => {
    const store = bareStore();
    const run = await startRun(store, 'fifo-back');
    const { workTree } = run.git;
    write(workTree, { 'src/app.py': 'x = 1\n', '.gitignore': 'build/\n' });
    const commit = (await commitWork(store, run.git, run.branch))!;
    try {
      // What the next step's code leaves on this host before the worker brings the tree back.
      fs.rmSync(path.join(workTree, '.gitignore'));
      mkfifo(path.join(workTree, '.gitignore'));
      mkfifo(path.join(workTree, '.gitattributes'));
      mkfifo(path.join(workTree, 'src', '.gitignore'));
      // Ignored and in a nested repository: both kept from git's eyes until the reset reaches them.
      mkfifo(path.join(workTree, 'build', '.gitattributes'));
      fs.mkdirSync(path.join(workTree, 'vendor', '.git'), { recursive: true });
      mkfifo(path.join(workTree, 'vendor', '.gitignore'));

      const brought = await within(
        20_000,
        'bringToCommit',
        bringToCommit(store, { workTree, gitDir: run.git.gitDir, branch: run.branch, commit }),
      );
      expect(brought.changed).toBe(true);
      expect(fs.readFileSync(path.join(workTree, '.gitignore'), 'utf8')).toBe('build/\n');
      expect(fs.readdirSync(workTree).sort()).toEqual(['.gitignore', 'build', 'src']);
      expect(fs.readdirSync(path.join(workTree, 'src'))).toEqual(['app.py']);
      expect(fs.readdirSync(path.join(workTree, 'build'))).toEqual([]);
      // And the tree now counts as at the commit, without a hang either.
      const again = await within(
        20_000,
        'bringToCommit',
        bringToCommit(store, { workTree, gitDir: run.git.gitDir, branch: run.branch, commit }),
      );
      expect(again.changed).toBe(false);
    } finally {
      unblockFifos(workTree);
    }
  }, 60_000);
});

describe('links out of the work tree, committed as root and pushed', () => {
  test('a link to a root-only file or folder is pushed as a link: nothing it points at reaches the store', async () => {
    const outside = tempDir('aca-store-attack-secret-');
    const secretText = `SECRET-${Math.random().toString(36).slice(2)}`;
    write(outside, { id_rsa: `${secretText} key\n`, 'dir/token': `${secretText} token\n` });
    fs.chmodSync(path.join(outside, 'id_rsa'), 0o600);
    const store = bareStore();
    const run = await startRun(store, 'links');
    const { workTree } = run.git;
    write(workTree, { 'app.py': 'x = 1\n' });
    fs.symlinkSync(path.join(outside, 'id_rsa'), path.join(workTree, 'key'));
    fs.symlinkSync(path.join(outside, 'dir'), path.join(workTree, 'secrets'));
    fs.symlinkSync('/etc/shadow', path.join(workTree, 'shadow'));
    // git must not follow these either (it reads them when deciding what to add).
    fs.symlinkSync(path.join(outside, 'id_rsa'), path.join(workTree, '.gitattributes'));
    fs.symlinkSync(path.join(outside, 'id_rsa'), path.join(workTree, '.gitignore'));
    fs.mkdirSync(path.join(workTree, 'sub'));
    fs.symlinkSync(path.join(outside, 'dir'), path.join(workTree, 'sub', 'inner'));

    const commit = (await commitWork(store, run.git, run.branch))!;
    const entries = rawGit(store.url, null, 'ls-tree', '-r', commit)
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [meta, name] = line.split('\t');
        return `${meta!.split(' ')[0]} ${name}`;
      });
    expect(entries).toEqual([
      '120000 .gitattributes',
      '120000 .gitignore',
      '100644 app.py',
      '120000 key',
      '120000 secrets',
      '120000 shadow',
      '120000 sub/inner',
    ]);
    expect(rawGit(store.url, null, 'cat-file', '-p', `${commit}:key`)).toBe(path.join(outside, 'id_rsa'));
    const everything = allStoreContent(store);
    expect(everything).not.toContain(secretText);
    expect(everything).not.toMatch(/^root:/m);
  });
});

describe("the store's disk fills up", () => {
  // Mounting the small disk (a tmpfs) needs root; as another user there is no full disk to reach.
  const rootOnly = isRoot() ? test : test.skip;
  rootOnly(
    'a step too large for the store: a retryable error naming the store; its branch and disk as before',
    async () => {
      const parent = tempDir('aca-store-attack-full-');
      const disk = path.join(parent, 'disk');
      fs.mkdirSync(disk);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', disk]);
      try {
        const store = bareStore(disk);
        const run = await startRun(store, 'flood');
        const used = () => Number(execFileSync('du', ['-sk', disk], { encoding: 'utf8' }).split('\t')[0]);
        const before = used();
        // Incompressible, so it takes its full size in the store.
        write(run.git.workTree, { 'big.bin': randomBytes(3 * 1024 * 1024) });

        const error = await commitWork(store, run.git, run.branch).catch((err: unknown) => err);
        expect(error).toBeInstanceOf(WorkerDiskFullError);
        expect((error as Error).message).toContain(store.display);
        expect((error as Error).message).toMatch(/No space left on device/);
        expect(asStoreFailure(error)).toMatchObject({ type: 'WorkerDiskFull', nonRetryable: false });
        // Nothing half-pushed: the branch is where it was, and the store's quarantine is gone.
        expect(await storeBranchTip(store, run.git.commonDir, run.branch)).toBe(run.base);
        expect(used()).toBeLessThanOrEqual(before + 64);
      } finally {
        execFileSync('umount', [disk]);
      }
    },
    60_000,
  );
});

describe('sparse files: gigabytes to git, a few KiB on disk', () => {
  /** A file of `bytes` apparent size holding one real byte: the sandbox's disk quota barely sees it. */
  function sparse(file: string, bytes: number): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, 'x', bytes - 1);
    fs.closeSync(fd);
  }

  test('a step whose new files come to more than a commit may hold is refused before git reads one', async () => {
    const store = bareStore();
    const run = await startRun(store, 'sparse');
    write(run.git.workTree, { 'src/app.py': 'x = 1\n' });
    const first = (await commitWork(store, run.git, run.branch))!;
    // 40 x 64 MiB: 2.5 GiB for git to read, hash and compress; before the limit, minutes of work
    // (holding the run's index.lock past the activity's end) and gigabytes on two disks.
    for (let i = 0; i < 40; i++)
      sparse(path.join(run.git.workTree, 'out', `blob-${i}.bin`), 64 * 1024 * 1024);
    write(run.git.workTree, { 'src/app.py': 'x = 2\n' });

    const started = Date.now();
    const error = await within(20_000, 'commitWork', commitWork(store, run.git, run.branch)).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(WorkTreeTooLargeError);
    expect((error as Error).message).toMatch(
      /41 new or changed files come to 2560\.0 MiB, over the 512\.0 MiB/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    // Nothing committed, staged or pushed, and nothing of the files written into git.
    expect(await storeBranchTip(store, run.git.commonDir, run.branch)).toBe(first);
    expect(rawGit(run.git.gitDir, null, 'diff', '--cached', '--name-only').trim()).toBe('');
    expect(fs.existsSync(path.join(run.git.gitDir, 'index.lock'))).toBe(false);
    const objects = Number(
      execFileSync('du', ['-sk', path.join(run.git.commonDir, 'objects')], { encoding: 'utf8' }).split(
        '\t',
      )[0],
    );
    expect(objects).toBeLessThan(1024);
  }, 60_000);

  test('one file over the per-file limit is named; files within both limits commit as before', async () => {
    const store = bareStore();
    const run = await startRun(store, 'sparse-one');
    sparse(path.join(run.git.workTree, 'dump.bin'), 101 * 1024 * 1024);
    const error = await commitWork(store, run.git, run.branch).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(WorkTreeTooLargeError);
    expect((error as Error).message).toContain(
      'dump.bin of 101.0 MiB, over the 100.0 MiB a committed file may have',
    );
    fs.rmSync(path.join(run.git.workTree, 'dump.bin'));
    sparse(path.join(run.git.workTree, 'data.bin'), 2 * 1024 * 1024);
    const commit = await commitWork(store, run.git, run.branch);
    expect(rawGit(store.url, null, 'ls-tree', '-r', '--name-only', commit!).trim()).toBe('data.bin');
  }, 60_000);
});
