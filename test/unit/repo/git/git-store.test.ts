/**
 * The git store with real git: as a folder, and behind a `git daemon` on 127.0.0.1 standing in for
 * another machine. Two "hosts" are two ACA_HOME / workspace roots in temp folders.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { asStoreFailure } from '../../../../src/activities/store-failures';
import {
  bringToCommit,
  deleteStoreBranch,
  ensureGitStore,
  pushRunCommit,
  storeBranchTip,
  GitStorePushRejectedError,
  GitStoreUnreachableError,
  GitStoreMissingCommitError,
  WorkerDiskFullError,
  parseGitStoreLocation,
  createFreshRunRepository,
  commitAll,
  type GitStoreLocation,
} from '../../../../src/repo';
import { isRoot } from '../../../../src/sandbox';
import { SystemError } from '../../../../src/shared/errors';
import type { RunPlace } from '../../../../src/shared/run-types';
import { getFreePort } from '../../../../src/temporal/dev-server';
import { startGitDaemon, type GitDaemon } from '../../../helpers/git-daemon';
import { tempDirs } from '../../../helpers/temp-dirs';
import { rawGit } from '../../../helpers/raw-git';

const tempDir = tempDirs('aca-store-test-');

interface Host {
  home: string;
  workspaces: string;
}

function makeHost(): Host {
  const root = tempDir('aca-store-host-');
  return { home: path.join(root, 'home'), workspaces: path.join(root, 'workspaces') };
}

function runLayout(host: Host, id: string): { gitDir: string; workTree: string } {
  return { gitDir: path.join(host.home, 'git', `${id}.git`), workTree: path.join(host.workspaces, id) };
}

function write(dir: string, files: Record<string, string | Buffer | null>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    if (content === null) {
      fs.rmSync(file, { force: true });
      continue;
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

/** A run on `host` as prepareRun and commitWork make it, with every commit pushed to `store`. */
async function startRun(store: GitStoreLocation, host: Host, id: string) {
  const branch = `aca/${id}`;
  const layout = runLayout(host, id);
  const made = await createFreshRunRepository({ ...layout, branch });
  await pushRunCommit(store, made, branch, made.baseCommit, null);
  let tip = made.baseCommit;
  return {
    branch,
    git: made,
    base: made.baseCommit,
    /** Writes files, commits, pushes with the previous tip as the lease; the new commit. */
    async step(files: Record<string, string | Buffer | null>, prepare?: () => void): Promise<string> {
      write(layout.workTree, files);
      prepare?.();
      const commit = await commitAll(made, 'aca: step');
      if (!commit) throw new Error('nothing committed');
      await pushRunCommit(store, made, branch, commit, tip);
      tip = commit;
      return commit;
    },
  };
}

function hash(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Every entry of the work tree but its top `.git`: content hashes, link targets, executable bits. */
function treeContents(workTree: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (relative: string) => {
    for (const entry of fs.readdirSync(path.join(workTree, relative), { withFileTypes: true })) {
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      if (name === '.git') continue;
      const full = path.join(workTree, name);
      if (entry.isSymbolicLink()) found[name] = `link:${fs.readlinkSync(full)}`;
      else if (entry.isDirectory()) walk(name);
      else found[name] = `${(fs.statSync(full).mode & 0o111) !== 0 ? 'x' : '-'}:${hash(full)}`;
    }
  };
  walk('');
  return found;
}

function indexOf(dirs: Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree'>): string {
  return rawGit(dirs.gitDir, dirs.workTree, 'ls-files', '-s');
}

const sampleFiles = {
  'src/app.py': 'def add(a, b):\n    return a + b\n',
  'data/b.txt': 'bee\n',
  'bin/blob.bin': Buffer.from([0, 1, 2, 255, 254, 10, 13, 0]),
  'docs/notes.md': 'line one\r\nline two\r\n',
};

function closedPort(): Promise<number> {
  return getFreePort();
}

describe('the default store (a folder under ACA_HOME)', () => {
  test('is made on first use, once, however many workers make it at the same time', async () => {
    const home = tempDir();
    const store = parseGitStoreLocation(undefined, home);
    expect(store).toMatchObject({ url: path.join(home, 'store.git'), scheme: 'file', isDefault: true });
    await Promise.all(Array.from({ length: 6 }, () => ensureGitStore(store)));
    expect(rawGit(store.url, null, 'rev-parse', '--is-bare-repository').trim()).toBe('true');
    // No half-made store is left beside it.
    expect(fs.readdirSync(home)).toEqual(['store.git']);
  });

  test('a default store never made has no branch to remove, and is not made for it', async () => {
    const home = tempDir();
    const store = parseGitStoreLocation(undefined, home);
    expect(await deleteStoreBranch(store, 'aca/none')).toBeNull();
    expect(fs.existsSync(store.url)).toBe(false);
  });

  test('a configured folder that is no repository is out of reach, named, and not created', async () => {
    const missing = path.join(tempDir(), 'nowhere', 'store.git');
    const store = parseGitStoreLocation(missing, '/unused');
    const host = makeHost();
    const made = await createFreshRunRepository({ ...runLayout(host, 'r0'), branch: 'aca/r0' });
    const failure = pushRunCommit(store, made, 'aca/r0', made.baseCommit, null, { timeoutMs: 20_000 });
    await expect(failure).rejects.toThrow(GitStoreUnreachableError);
    await expect(failure).rejects.toThrow(missing);
    expect(fs.existsSync(missing)).toBe(false);
  });
});

describe.each([
  ['a folder', 'folder'],
  ['a git daemon (git://)', 'daemon'],
] as const)('a store that is %s', (_label, kind) => {
  let daemon: GitDaemon | null = null;
  let store: GitStoreLocation;
  let storeDir: string;

  beforeAll(async () => {
    const base = tempDir('aca-store-served-');
    storeDir = path.join(base, 'store.git');
    rawGit(storeDir, null, 'init', '--bare', '--quiet');
    if (kind === 'daemon') {
      daemon = await startGitDaemon(base);
      store = parseGitStoreLocation(daemon.url('store.git'), '/unused');
    } else {
      store = parseGitStoreLocation(storeDir, '/unused');
    }
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  test('round trip: pushed steps reach a second host byte for byte, at any recorded commit', async () => {
    const hostA = makeHost();
    const run = await startRun(store, hostA, 'rt');
    const first = await run.step(sampleFiles, () => {
      fs.symlinkSync('src/app.py', path.join(run.git.workTree, 'link-to-app'));
      fs.chmodSync(path.join(run.git.workTree, 'src/app.py'), 0o755);
    });
    const firstContents = treeContents(run.git.workTree);
    const firstIndex = indexOf(run.git);
    const second = await run.step({
      'src/app.py': 'def add(a, b):\n    return b + a\n',
      'data/b.txt': null,
      'new.txt': 'n\n',
    });
    expect(await storeBranchTip(store, run.git.commonDir, run.branch)).toBe(second);
    expect(rawGit(storeDir, null, 'rev-parse', `refs/heads/${run.branch}`).trim()).toBe(second);

    // Another worker: other ACA_HOME, other workspaces root, nothing of the run on its disk.
    const hostB = makeHost();
    const layoutB = runLayout(hostB, 'rt');
    const brought = await bringToCommit(store, { ...layoutB, branch: run.branch, commit: second });
    expect(brought).toMatchObject({ fetched: true, changed: true });
    expect(brought).toMatchObject({
      gitDir: layoutB.gitDir,
      commonDir: layoutB.gitDir,
      workTree: layoutB.workTree,
    });
    expect(treeContents(layoutB.workTree)).toEqual(treeContents(run.git.workTree));
    expect(indexOf(brought)).toBe(indexOf(run.git));
    expect(fs.existsSync(path.join(layoutB.workTree, '.git'))).toBe(false);

    // Back to an earlier recorded commit, from what the worker has; then again: nothing to do.
    const back = await bringToCommit(store, { ...layoutB, branch: run.branch, commit: first });
    expect(back).toMatchObject({ fetched: false, changed: true });
    expect(treeContents(layoutB.workTree)).toEqual(firstContents);
    expect(indexOf(back)).toBe(firstIndex);
    expect((await bringToCommit(store, { ...layoutB, branch: run.branch, commit: first })).changed).toBe(
      false,
    );

    // Host B makes the next step; host A, still at `second`, brings itself to it.
    await bringToCommit(store, { ...layoutB, branch: run.branch, commit: second });
    write(layoutB.workTree, { 'from-b.txt': 'b\n' });
    const third = await commitAll(brought, 'aca: on b');
    await pushRunCommit(store, brought, run.branch, third!, second);
    const onA = await bringToCommit(store, { ...runLayout(hostA, 'rt'), branch: run.branch, commit: third! });
    expect(onA).toMatchObject({ fetched: true, changed: true });
    expect(fs.readFileSync(path.join(run.git.workTree, 'from-b.txt'), 'utf8')).toBe('b\n');
    expect(treeContents(run.git.workTree)).toEqual(treeContents(layoutB.workTree));
  });

  test('a push is refused when another pusher moved the branch, and the store keeps their commit', async () => {
    const host = makeHost();
    const run = await startRun(store, host, 'moved');
    const mine = await run.step({ 'a.txt': 'mine\n' });

    // Someone else advances the store's branch from `mine`.
    const other = tempDir('aca-store-other-');
    const otherGit = path.join(other, 'git');
    rawGit(otherGit, null, 'init', '--quiet', '--bare');
    rawGit(otherGit, null, 'fetch', '--quiet', storeDir, `refs/heads/${run.branch}:refs/heads/${run.branch}`);
    const tree = rawGit(otherGit, null, 'rev-parse', `${mine}^{tree}`).trim();
    const theirs = rawGit(otherGit, null, 'commit-tree', tree, '-p', mine, '-m', 'theirs').trim();
    rawGit(otherGit, null, 'push', '--quiet', storeDir, `${theirs}:refs/heads/${run.branch}`);

    write(run.git.workTree, { 'a.txt': 'mine again\n' });
    const next = await commitAll(run.git, 'aca: next');
    const refused = pushRunCommit(store, run.git, run.branch, next!, mine);
    await expect(refused).rejects.toThrow(GitStorePushRejectedError);
    await expect(refused).rejects.toThrow(
      new RegExp(
        `${store.display.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} refused the push of branch ${run.branch}.*it is at ${theirs}`,
      ),
    );
    const error = await refused.catch((err: unknown) => err);
    expect(error).toMatchObject({ branch: run.branch, expected: mine, actual: theirs });
    expect(asStoreFailure(error)).toMatchObject({ type: 'GitStorePushRejected', nonRetryable: true });
    expect(rawGit(storeDir, null, 'rev-parse', `refs/heads/${run.branch}`).trim()).toBe(theirs);

    // A lease for a branch the store must not have yet is refused the same way.
    await expect(pushRunCommit(store, run.git, run.branch, next!, null)).rejects.toThrow(
      GitStorePushRejectedError,
    );
    expect(rawGit(storeDir, null, 'rev-parse', `refs/heads/${run.branch}`).trim()).toBe(theirs);
  });

  test('a retried push of a commit the store has already is done; a commit the store lacks is said so', async () => {
    const host = makeHost();
    const run = await startRun(store, host, 'again');
    const base = run.base;
    const c1 = await run.step({ 'a.txt': '1\n' });
    await pushRunCommit(store, run.git, run.branch, c1, base);
    // A lease that does not match refuses even a commit the store has had before.
    await expect(pushRunCommit(store, run.git, run.branch, base, null)).rejects.toThrow(
      GitStorePushRejectedError,
    );
    expect(rawGit(storeDir, null, 'rev-parse', `refs/heads/${run.branch}`).trim()).toBe(c1);

    const hostB = makeHost();
    const missing = bringToCommit(store, {
      ...runLayout(hostB, 'again'),
      branch: run.branch,
      commit: 'f'.repeat(40),
    });
    await expect(missing).rejects.toThrow(GitStoreMissingCommitError);
  });

  test("aca discard's removal of a branch: only where it was read, and nothing to do when it is gone", async () => {
    const run = await startRun(store, makeHost(), 'gone');
    const c1 = await run.step({ 'a.txt': '1\n' });
    expect(await deleteStoreBranch(store, run.branch)).toBe(c1);
    expect(await storeBranchTip(store, run.git.commonDir, run.branch)).toBeNull();
    expect(await deleteStoreBranch(store, run.branch)).toBeNull();
  });

  test('bringing a work tree back follows and runs nothing the code under test planted', async () => {
    const hostA = makeHost();
    const run = await startRun(store, hostA, 'hostile');
    const commit = await run.step(sampleFiles);
    const expected = treeContents(run.git.workTree);
    const expectedIndex = indexOf(run.git);
    const hostB = makeHost();
    const layout = runLayout(hostB, 'hostile');
    await bringToCommit(store, { ...layout, branch: run.branch, commit });
    // A repository's own config may relax git's stat checks; aca's calls pin them back.
    rawGit(layout.gitDir, null, 'config', 'core.trustctime', 'false');
    rawGit(layout.gitDir, null, 'config', 'core.checkStat', 'minimal');
    // A tracked file changed with its size and time kept.
    // (An hour old and in the index as such, so git cannot take it for racily clean.)
    const app = path.join(layout.workTree, 'src', 'app.py');
    const old = new Date(Date.now() - 3_600_000);
    fs.utimesSync(app, old, old);
    rawGit(layout.gitDir, layout.workTree, 'update-index', '--refresh');
    fs.writeFileSync(app, 'def add(a, b):\n    return a - b\n');
    fs.utimesSync(app, old, old);

    const outside = tempDir('aca-store-outside-');
    write(outside, { 'b.txt': 'outside b\n', 'keep.txt': 'keep\n' });
    const marker = path.join(outside, 'hook-ran');
    const hook = `#!/bin/sh\ntouch ${marker}\n`;
    // A git directory of the code's own, with hooks, named by a `.git` file at the top...
    const evilGit = path.join(layout.workTree, 'evil-git');
    rawGit(evilGit, null, 'init', '--quiet', '--bare');
    for (const name of ['post-checkout', 'pre-commit', 'post-index-change', 'reference-transaction']) {
      write(evilGit, { [`hooks/${name}`]: hook });
      fs.chmodSync(path.join(evilGit, 'hooks', name), 0o755);
    }
    rawGit(evilGit, null, 'config', 'core.fsmonitor', `touch ${marker}`);
    fs.writeFileSync(path.join(layout.workTree, '.git'), `gitdir: ${evilGit}\n`);
    // ...and a nested repository with a hook, a folder of the commit swapped for a link out, a
    // link out that is untracked, an unwritable folder, and attributes naming a filter.
    fs.mkdirSync(path.join(layout.workTree, 'src', 'nested'), { recursive: true });
    fs.symlinkSync(evilGit, path.join(layout.workTree, 'src', 'nested', '.git'));
    fs.rmSync(path.join(layout.workTree, 'data'), { recursive: true });
    fs.symlinkSync(outside, path.join(layout.workTree, 'data'));
    fs.symlinkSync(outside, path.join(layout.workTree, 'escape'));
    fs.mkdirSync(path.join(layout.workTree, 'locked', 'inner'), { recursive: true });
    write(layout.workTree, { 'locked/inner/x.txt': 'x', '.gitattributes': '* filter=evil\n' });
    fs.chmodSync(path.join(layout.workTree, 'locked'), 0o555);

    const brought = await bringToCommit(store, { ...layout, branch: run.branch, commit });
    expect(brought.changed).toBe(true);
    expect(treeContents(layout.workTree)).toEqual(expected);
    expect(indexOf(brought)).toBe(expectedIndex);
    expect(fs.existsSync(path.join(layout.workTree, '.git'))).toBe(false);
    expect(fs.lstatSync(path.join(layout.workTree, 'data')).isDirectory()).toBe(true);
    expect(fs.existsSync(marker)).toBe(false);
    // Nothing outside was followed into: removed, written or run.
    expect(fs.readdirSync(outside).sort()).toEqual(['b.txt', 'keep.txt']);
    expect(fs.readFileSync(path.join(outside, 'b.txt'), 'utf8')).toBe('outside b\n');
  });

  test('a run with --repo: its worktree in the user repository is reset and its pointer rewritten', async () => {
    const user = tempDir('aca-store-user-');
    const userRepo = path.join(user, 'repo');
    fs.mkdirSync(userRepo);
    rawGit(path.join(userRepo, '.git'), userRepo, 'init', '--quiet', '--initial-branch=main');
    write(userRepo, { 'README.md': '# r\n' });
    rawGit(path.join(userRepo, '.git'), userRepo, 'add', '-A');
    rawGit(path.join(userRepo, '.git'), userRepo, 'commit', '--quiet', '-m', 'base');
    const { createRunWorktree } = await import('../../../../src/repo');
    const host = makeHost();
    const workTree = path.join(host.workspaces, 'linked');
    const worktree = await createRunWorktree({
      repoDir: userRepo,
      workTree,
      branch: 'aca/linked',
      base: 'HEAD',
    });
    const dirs: Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree'> = {
      gitDir: worktree.gitDir,
      commonDir: worktree.commonDir,
      workTree,
    };
    await pushRunCommit(store, dirs, 'aca/linked', worktree.baseCommit, null);
    write(workTree, { 'a.txt': 'a\n' });
    const c1 = (await commitAll(worktree, 'aca: one'))!;
    await pushRunCommit(store, dirs, 'aca/linked', c1, worktree.baseCommit);

    fs.rmSync(path.join(workTree, '.git'));
    fs.symlinkSync('/etc', path.join(workTree, '.git'));
    write(workTree, { 'a.txt': 'changed\n', 'junk.txt': 'j' });
    const brought = await bringToCommit(store, {
      workTree,
      gitDir: worktree.gitDir,
      branch: 'aca/linked',
      commit: c1,
    });
    expect(brought).toEqual({ ...dirs, fetched: expect.any(Boolean), changed: true });
    expect(fs.readFileSync(path.join(workTree, '.git'), 'utf8')).toBe(`gitdir: ${worktree.gitDir}\n`);
    expect(fs.readFileSync(path.join(workTree, 'a.txt'), 'utf8')).toBe('a\n');
    expect(fs.existsSync(path.join(workTree, 'junk.txt'))).toBe(false);
    // The user's own checkout is as it was.
    expect(rawGit(path.join(userRepo, '.git'), userRepo, 'status', '--porcelain')).toBe('');
    expect(rawGit(path.join(userRepo, '.git'), null, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
  });
});

describe('a store out of reach', () => {
  test('a closed port: a retryable error that names the store', async () => {
    const port = await closedPort();
    const store = parseGitStoreLocation(`git://127.0.0.1:${port}/store.git`, '/unused');
    const host = makeHost();
    const made = await createFreshRunRepository({ ...runLayout(host, 'closed'), branch: 'aca/closed' });
    const error = await pushRunCommit(store, made, 'aca/closed', made.baseCommit, null).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(GitStoreUnreachableError);
    expect(error).toBeInstanceOf(SystemError);
    expect((error as Error).message).toContain(`git://127.0.0.1:${port}/store.git`);
    expect(asStoreFailure(error)).toMatchObject({ type: 'GitStoreUnreachable', nonRetryable: false });

    const fetch = bringToCommit(store, {
      ...runLayout(makeHost(), 'closed'),
      branch: 'aca/closed',
      commit: made.baseCommit,
    });
    await expect(fetch).rejects.toThrow(GitStoreUnreachableError);
  });

  test('credentials in its URL are never shown', async () => {
    const port = await closedPort();
    const store = parseGitStoreLocation(`http://aca:s3cret-token@127.0.0.1:${port}/store.git`, '/unused');
    expect(store.display).toBe(`http://127.0.0.1:${port}/store.git`);
    const host = makeHost();
    const made = await createFreshRunRepository({ ...runLayout(host, 'cred'), branch: 'aca/cred' });
    const error = (await pushRunCommit(store, made, 'aca/cred', made.baseCommit, null).catch(
      (err: unknown) => err,
    )) as GitStoreUnreachableError;
    expect(error).toBeInstanceOf(GitStoreUnreachableError);
    expect(error.message).toContain(`127.0.0.1:${port}`);
    expect(
      JSON.stringify({ message: error.message, detail: error.detail, store: error.store }),
    ).not.toContain('s3cret');
  });

  test('a store that accepts the connection and never answers: the call is cut off at its time limit', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const store = parseGitStoreLocation(`git://127.0.0.1:${port}/store.git`, '/unused');
      const made = await createFreshRunRepository({ ...runLayout(makeHost(), 'hang'), branch: 'aca/hang' });
      const started = Date.now();
      const failure = pushRunCommit(store, made, 'aca/hang', made.baseCommit, null, { timeoutMs: 1500 });
      await expect(failure).rejects.toThrow(/cannot be reached \(push\): no answer within 2s/);
      expect(Date.now() - started).toBeLessThan(15_000);

      // Over http git runs a helper process; it goes with git rather than hanging on.
      const overHttp = parseGitStoreLocation(`http://127.0.0.1:${port}/store.git`, '/unused');
      const fetchStarted = Date.now();
      const fetch = bringToCommit(overHttp, {
        ...runLayout(makeHost(), 'hang'),
        branch: 'aca/hang',
        commit: 'a'.repeat(40),
        timeoutMs: 1500,
      });
      await expect(fetch).rejects.toThrow(GitStoreUnreachableError);
      expect(Date.now() - fetchStarted).toBeLessThan(6_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const processes = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
      expect(processes.split('\n').filter((line) => line.includes(`127.0.0.1:${port}`))).toEqual([]);
    } finally {
      sockets.forEach((socket) => socket.destroy());
      silent.close();
    }
  });
});

describe('a worker whose disk is full', () => {
  const rootOnly = isRoot() ? test : test.skip;
  rootOnly('bringing a run to it is a retryable error that says where the disk is full', async () => {
    const storeDir = path.join(tempDir(), 'store.git');
    rawGit(storeDir, null, 'init', '--bare', '--quiet');
    const store = parseGitStoreLocation(storeDir, '/unused');
    const run = await startRun(store, makeHost(), 'full');
    const big = Buffer.from(Array.from({ length: 2 * 1024 * 1024 }, () => Math.floor(Math.random() * 256)));
    const commit = await run.step({ 'big.bin': big });

    const disk = tempDir('aca-store-small-disk-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', disk]);
    try {
      const host: Host = { home: path.join(disk, 'home'), workspaces: path.join(disk, 'workspaces') };
      const error = await bringToCommit(store, {
        ...runLayout(host, 'full'),
        branch: run.branch,
        commit,
      }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(WorkerDiskFullError);
      expect((error as Error).message).toContain(disk);
      expect(asStoreFailure(error)).toMatchObject({ type: 'WorkerDiskFull', nonRetryable: false });
    } finally {
      execFileSync('umount', [disk]);
    }
  });
});
