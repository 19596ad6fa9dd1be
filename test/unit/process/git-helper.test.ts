/**
 * git runs through the worker's small spawn helper (src/process/spawn-helper.ts, `run`). What
 * git.ts relies on must hold through it: exit codes, stderr, bytes, large output and its bound,
 * stdin, time limits that kill the whole process group, a helper that dies, an environment that
 * is exactly the one given; and the cached driver pins must follow every change of the config.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { git, GitError, gitBytes, gitWithStatus } from '../../../src/repo';
import { SpawnHelper, sharedHelperPid, type RunRequest } from '../../../src/process';
import { until } from '../../helpers/until';

const request = (command: string, args: string[], extra: Partial<RunRequest> = {}): RunRequest => ({
  command,
  args,
  cwd: '/tmp',
  env: { PATH: '/usr/bin:/bin' },
  timeoutMs: 0,
  maxOutputBytes: 1024 * 1024,
  ...extra,
});

const isAlive = (pid: number): boolean => {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** The helper's environment besides the IPC channel Node gives it. */
const helperEnvironment = (pid: number): string[] =>
  fs
    .readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter((entry) => entry && !entry.startsWith('NODE_CHANNEL_'));

describe('short commands run through a helper', () => {
  let helperPid = 0;
  const helper = new SpawnHelper((pid) => {
    helperPid = pid;
  });

  test('stdout, stderr and the exit code come back apart', async () => {
    const r = await helper.run(request('/bin/sh', ['-c', 'echo out; echo err >&2; exit 7']));
    expect(r).toMatchObject({ code: 7, signal: null, timedOut: false, overflowed: false });
    expect(r.stdout.toString()).toBe('out\n');
    expect(r.stderr.toString()).toBe('err\n');
  });

  test('a command that does not exist rejects with ENOENT', async () => {
    await expect(helper.run(request('/no/such/binary', []))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  test('a folder that does not exist rejects', async () => {
    await expect(helper.run(request('/bin/true', [], { cwd: '/no/such/folder' }))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  test('large output arrives whole, byte for byte', async () => {
    const bytes = 8 * 1024 * 1024;
    const r = await helper.run(
      request('/bin/sh', ['-c', `head -c ${bytes} /dev/urandom | tee /tmp/aca-run-${process.pid}`], {
        maxOutputBytes: 16 * 1024 * 1024,
      }),
    );
    const file = `/tmp/aca-run-${process.pid}`;
    try {
      expect(r.code).toBe(0);
      expect(r.stdout.equals(fs.readFileSync(file))).toBe(true);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  test('output past the bound kills the command and says so', async () => {
    const r = await helper.run(request('/bin/sh', ['-c', 'yes'], { maxOutputBytes: 100_000 }));
    expect(r.overflowed).toBe(true);
    expect(r.stdout.length).toBeLessThanOrEqual(100_000);
  });

  test('stdin gets the input given, and /dev/null without one', async () => {
    const input = Buffer.from(randomBytes(100_000).toString('hex'));
    const fed = await helper.run(request('/bin/cat', [], { input }));
    expect(fed.stdout.equals(input)).toBe(true);
    const none = await helper.run(request('/bin/cat', []));
    expect(none).toMatchObject({ code: 0 });
    expect(none.stdout.length).toBe(0);
  });

  test('a time limit kills the whole process group', async () => {
    const pidFile = `/tmp/aca-run-timeout-${process.pid}-${randomBytes(4).toString('hex')}`;
    const started = Date.now();
    const r = await helper.run(
      request('/bin/sh', ['-c', `sleep 60 & echo $! > ${pidFile}; wait`], { timeoutMs: 500 }),
    );
    expect(r.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    fs.rmSync(pidFile, { force: true });
    await until(() => !isAlive(grandchild), 5_000, 'the grandchild to be killed');
  });

  test('the environment is exactly the one given, and the helper holds none of the worker', async () => {
    process.env.ACA_HELPER_TEST_SECRET = 'do-not-leak';
    try {
      const r = await helper.run(request('/usr/bin/env', [], { env: { ONLY_THIS: 'yes' } }));
      expect(r.stdout.toString().trim()).toBe('ONLY_THIS=yes');
      expect(helperEnvironment(helperPid)).toEqual([]);
    } finally {
      delete process.env.ACA_HELPER_TEST_SECRET;
    }
  });

  test('a helper that dies fails the calls in flight clearly; the next call starts another', async () => {
    await helper.run(request('/bin/true', []));
    const first = helperPid;
    const inFlight = helper.run(request('/bin/sleep', ['5']));
    await new Promise((r) => setTimeout(r, 200));
    process.kill(first, 'SIGKILL');
    await expect(inFlight).rejects.toThrow('the process helper exited');
    const r = await helper.run(request('/bin/sh', ['-c', 'echo again']));
    expect(r.stdout.toString()).toBe('again\n');
    expect(helperPid).not.toBe(first);
  });
});

describe('git through the helper', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-git-helper-'));
  const repo = path.join(root, 'repo');
  const target = { gitDir: path.join(repo, '.git'), workTree: repo };
  const marker = path.join(root, 'filter-ran');

  beforeAll(() => {
    execFileSync('git', ['init', '-q', repo]);
    fs.writeFileSync(path.join(repo, 'a.txt'), 'a\n');
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('a failing call is a GitError with its exit code and stderr', async () => {
    const err: unknown = await git(target, ['rev-parse', '--verify', 'no-such-ref']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect(err).toMatchObject({ exitCode: 128, stderr: expect.stringContaining('single revision') });
    const allowed = await gitWithStatus(target, ['rev-parse', '--verify', '--quiet', 'no-such-ref'], {
      allowExitCodes: [1],
    });
    expect(allowed.code).toBe(1);
  });

  test('bytes come back unchanged', async () => {
    const blob = randomBytes(300_000);
    fs.writeFileSync(path.join(root, 'blob.bin'), blob);
    const id = (await git(target, ['hash-object', '-w', path.join(root, 'blob.bin')])).trim();
    expect((await gitBytes(target, ['cat-file', 'blob', id])).equals(blob)).toBe(true);
  });

  test("git's environment is the pinned one: nothing of the worker's", async () => {
    process.env.ACA_HELPER_TEST_SECRET = 'do-not-leak';
    process.env.GIT_CONFIG_PARAMETERS = "'core.hookspath'='/tmp/evil'";
    try {
      // An alias given on this command line (after the pins) shows the environment git has.
      const env = await git(target, ['-c', 'alias.show-env=!env', 'show-env']);
      expect(env).not.toContain('do-not-leak');
      expect(env).not.toContain('/tmp/evil');
      expect(env).toContain('GIT_CONFIG_NOSYSTEM=1');
      expect(env).toContain(`GIT_DIR=${target.gitDir}`);
      expect(helperEnvironment(sharedHelperPid()!)).toEqual([]);
    } finally {
      delete process.env.ACA_HELPER_TEST_SECRET;
      delete process.env.GIT_CONFIG_PARAMETERS;
    }
  });

  test('a filter driver added to the config after a call is pinned off all the same', async () => {
    await git(target, ['status', '--porcelain']);
    execFileSync('git', ['-C', repo, 'config', 'filter.late.clean', `sh -c 'touch ${marker}; cat'`]);
    execFileSync('git', ['-C', repo, 'config', 'filter.late.required', 'true']);
    fs.writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=late\n');
    await git(target, ['add', '-A']);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test("pins are shared by configs of the same bytes only: another repository's driver is pinned off", async () => {
    const twins = ['twin-a', 'twin-b'].map((name) => {
      const dir = path.join(root, name);
      execFileSync('git', ['init', '-q', '--template=', dir]);
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
      fs.writeFileSync(path.join(dir, '.gitattributes'), '*.txt filter=twin\n');
      return { gitDir: path.join(dir, '.git'), workTree: dir };
    });
    expect(fs.readFileSync(path.join(twins[0]!.gitDir, 'config'))).toEqual(
      fs.readFileSync(path.join(twins[1]!.gitDir, 'config')),
    );
    await git(twins[0]!, ['add', '-A']);
    execFileSync('git', [
      '--git-dir',
      twins[1]!.gitDir,
      'config',
      'filter.twin.clean',
      `sh -c 'touch ${marker}; cat'`,
    ]);
    execFileSync('git', ['--git-dir', twins[1]!.gitDir, 'config', 'filter.twin.required', 'true']);
    await git(twins[1]!, ['add', '-A']);
    expect(fs.existsSync(marker)).toBe(false);
    // The first twin's config is unchanged: its pins (none) still serve it.
    fs.writeFileSync(path.join(twins[0]!.workTree, 'b.txt'), 'b\n');
    await git(twins[0]!, ['add', '-A']);
    expect(await git(twins[0]!, ['ls-files'])).toBe('.gitattributes\na.txt\nb.txt\n');
  });

  test('a filter driver in an included config file is pinned off, also when that file changes', async () => {
    const included = path.join(root, 'included.config');
    fs.writeFileSync(included, '');
    execFileSync('git', ['-C', repo, 'config', 'include.path', included]);
    await git(target, ['status', '--porcelain']);
    fs.writeFileSync(included, `[filter "inc"]\n\tclean = sh -c 'touch ${marker}; cat'\n\trequired = true\n`);
    fs.writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=inc\n');
    fs.writeFileSync(path.join(repo, 'b.txt'), 'b\n');
    await git(target, ['add', '-A']);
    expect(fs.existsSync(marker)).toBe(false);
  });
});
