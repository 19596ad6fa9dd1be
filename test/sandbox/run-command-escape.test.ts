/**
 * An agent's command line (run_command) is hostile code run on the worker: every way out that a
 * test run is kept from, tried from a command, through runAgentCommand and, for a few, through the
 * runCommand activity. Each attempt must be contained and reported in the answer, and nothing the
 * command started may run on once the call has returned.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ANSWER_HEAD_BYTES,
  ANSWER_TAIL_BYTES,
  DENIED_SYSCALLS,
  runAgentCommand,
  seccompArchOf,
  STORED_HEAD_BYTES,
  STORED_TAIL_BYTES,
  type AgentCommandOptions,
} from '../../src/sandbox';
import { MARK, SECRET, watchHost } from '../helpers/escape-host';
import { pidsWithMarker, sandboxUidPids } from '../helpers/host-probes';
import { makeWorkspace } from '../helpers/workspace-fixture';

watchHost();

const run = (workspace: string, command: string, more: Partial<AgentCommandOptions> = {}) =>
  runAgentCommand({ workspace, command, timeoutMs: 30_000, mode: 'bwrap', ...more });

/** Nothing of the command may be running the moment the call returns: no grace period. */
function expectNothingLeft(): void {
  expect(sandboxUidPids()).toEqual([]);
  expect(pidsWithMarker(MARK)).toEqual([]);
}

describe('the network', () => {
  let server: http.Server;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.end('host');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => server.close());

  test("the host's services and the outside are unreachable", async () => {
    const ws = makeWorkspace({});
    const result = await run(
      ws,
      [
        `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached-host) || echo no-host`,
        '(exec 3<>/dev/tcp/1.1.1.1/80 && echo reached-outside) || echo no-outside',
        `/usr/bin/python3 -c 'import socket; socket.getaddrinfo("example.com", 80)' && echo resolved || echo no-dns`,
      ].join('\n'),
    );
    expect(result.stdout).toContain('no-host');
    expect(result.stdout).toContain('no-outside');
    expect(result.stdout).toContain('no-dns');
    expect(result.stdout).not.toMatch(/reached|resolved/);
    expect(hits).toBe(0);
  });
});

describe('files', () => {
  test('nothing outside the work tree can be written, and what the command writes there stays', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-command-outside-'));
    fs.chmodSync(outside, 0o777);
    try {
      const ws = makeWorkspace({ 'a.txt': 'a\n' });
      const result = await run(
        ws,
        [
          `echo pwned > ${outside}/planted && echo wrote-outside`,
          'echo pwned > /etc/planted && echo wrote-etc',
          'echo pwned > /usr/planted && echo wrote-usr',
          'echo fine > /tmp/scratch && echo wrote-tmp',
          'echo made > b.txt && echo wrote-workspace',
        ].join('\n'),
      );
      expect(result.stdout).toContain('wrote-tmp');
      expect(result.stdout).toContain('wrote-workspace');
      expect(result.stdout).not.toMatch(/wrote-(outside|etc|usr)/);
      expect(result.stderr).toMatch(/Read-only file system|No such file or directory/);
      expect(fs.readdirSync(outside)).toEqual([]);
      expect(fs.existsSync('/etc/planted')).toBe(false);
      expect(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8')).toBe('made\n');
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  test('an acceptance file can be neither written, removed nor moved aside', async () => {
    const originals = makeWorkspace({ 'tests/test_a.py': 'def test_a():\n    assert True\n' });
    const ws = makeWorkspace({ 'tests/test_a.py': 'def test_a():\n    assert True\n' });
    const result = await run(
      ws,
      [
        'echo "def test_a(): pass" > tests/test_a.py && echo overwrote',
        'rm -f tests/test_a.py && echo removed',
        'mv tests tests_aside && echo moved',
        'cat tests/test_a.py',
      ].join('\n'),
      { acceptance: { sourceDir: originals, files: ['tests/test_a.py'] } },
    );
    expect(result.stdout).not.toMatch(/overwrote|removed|moved/);
    expect(result.stdout).toContain('assert True');
    expect(fs.readFileSync(path.join(ws, 'tests/test_a.py'), 'utf8')).toBe(
      'def test_a():\n    assert True\n',
    );
    expect(fs.existsSync(path.join(ws, 'tests_aside'))).toBe(false);
    expect(result.restoredAcceptance).toBeUndefined();
  });

  // What a run's earlier sandboxed step left (a setup command run again on a host that adopted the
  // run has no acceptance folders mounted): the folders the command's sandbox binds onto
  // themselves must not be links by then, or a host folder could be bound in their place.
  test.each([
    ['an absolute link', (outside: string) => outside],
    ['a relative link', (outside: string) => `${'../'.repeat(12)}${outside.slice(1)}`],
    ['a link to the host /tmp', () => '/tmp'],
  ])(
    'an acceptance folder found as %s when the command starts binds nothing of the host',
    async (_kind, target) => {
      const outside = fs.mkdtempSync(path.join('/tmp', 'aca-command-outside-'));
      fs.chmodSync(outside, 0o777);
      fs.writeFileSync(path.join(outside, 'host-file'), `${MARK}-host-file\n`, { mode: 0o644 });
      try {
        const test = 'def test_a():\n    assert True\n';
        const originals = makeWorkspace({ 'tests/test_a.py': test, 'deep/er/test_b.py': test });
        const ws = makeWorkspace({ 'deep/er/test_b.py': test });
        fs.symlinkSync(target(outside), path.join(ws, 'tests'));
        fs.rmSync(path.join(ws, 'deep/er'), { recursive: true });
        fs.symlinkSync(target(outside), path.join(ws, 'deep/er'));
        const result = await run(
          ws,
          [
            `cat tests/host-file deep/er/host-file /tmp/${path.basename(outside)}/host-file`,
            'echo pwned > tests/planted && echo wrote-1',
            'echo pwned > deep/er/planted && echo wrote-2',
            'cat tests/test_a.py deep/er/test_b.py',
          ].join('\n'),
          { acceptance: { sourceDir: originals, files: ['tests/test_a.py', 'deep/er/test_b.py'] } },
        );
        expect(JSON.stringify(result)).not.toContain(`${MARK}-host-file`);
        expect(fs.readdirSync(outside)).toEqual(['host-file']);
        expect(
          fs.readdirSync('/tmp').filter((name) => /^(planted|test_a\.py|test_b\.py)$/.test(name)),
        ).toEqual([]);
        // The command ran, in folders of the work tree, over the acceptance files as they should be.
        expect(result.stdout).toBe(`wrote-1\nwrote-2\n${test}${test}`);
        for (const folder of ['tests', 'deep/er']) {
          expect(fs.lstatSync(path.join(ws, folder)).isDirectory()).toBe(true);
          expect(fs.readFileSync(path.join(ws, folder, 'planted'), 'utf8')).toBe('pwned\n');
        }
      } finally {
        fs.rmSync(outside, { recursive: true, force: true });
      }
    },
  );

  test('a read-only command (Planner, Reflector) changes nothing in the work tree', async () => {
    const ws = makeWorkspace({ 'a.txt': 'a\n', 'sub/b.txt': 'b\n' });
    const result = await run(
      ws,
      [
        'echo changed > a.txt && echo wrote',
        'rm -f sub/b.txt && echo removed',
        'mkdir new && echo made',
        'touch c.txt && echo touched',
        'chmod 777 a.txt && echo chmodded',
        'cat a.txt',
      ].join('\n'),
      { readOnly: true },
    );
    expect(result.stdout).toBe('a\n');
    expect(result.stderr).toContain('Read-only file system');
    expect(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('a\n');
    expect(fs.readFileSync(path.join(ws, 'sub/b.txt'), 'utf8')).toBe('b\n');
    expect(fs.readdirSync(ws).sort()).toEqual(['a.txt', 'sub']);
  });
});

describe('the read-only work tree, reached another way', () => {
  test('a Planner command cannot write through /proc, a mount namespace, a remount or a bind mount', async () => {
    const ws = makeWorkspace({ 'a.txt': 'a\n' });
    fs.chmodSync(path.join(ws, 'a.txt'), 0o644);
    const python = (code: string) => `/usr/bin/python3 -c '${code}'`;
    const result = await run(
      ws,
      [
        'echo x > /proc/self/cwd/w1 && echo wrote-1',
        python(
          'import os; fd = os.open(".", os.O_RDONLY); os.close(os.open("/proc/self/fd/%d/w2" % fd, os.O_CREAT | os.O_WRONLY))',
        ) + ' && echo wrote-2',
        `unshare -rm sh -c 'mount -o remount,rw /workspace && echo x > /workspace/w3' && echo wrote-3`,
        'mount -o remount,rw /workspace && echo wrote-4',
        'echo changed > /tmp/a.txt; mount --bind /tmp/a.txt /workspace/a.txt && echo wrote-5',
        python('import os; os.chmod("/workspace/a.txt", 0o777)') + ' && echo wrote-6',
        'ln -s /tmp /workspace/w7 && echo wrote-7',
        'cat a.txt',
      ].join('\n'),
      { readOnly: true },
    );
    expect(result.stdout).toBe('a\n');
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(fs.readdirSync(ws)).toEqual(['a.txt']);
    expect(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('a\n');
    expect(fs.statSync(path.join(ws, 'a.txt')).mode & 0o7777).toBe(0o644);
  });
});

describe('the terminal', () => {
  // Without a session of its own the command would share the worker's controlling terminal: it
  // could write escapes to the terminal `aca` runs in, or push keystrokes into it (TIOCSTI).
  test("the command runs in a session of its own, without the worker's terminal", async () => {
    const ws = makeWorkspace({});
    const result = await run(
      ws,
      [
        '/usr/bin/python3 -c \'import os; print("session", os.getsid(0))\'',
        '(exec 3<>/dev/tty && echo tty-opened) 2>/dev/null || echo no-tty',
      ].join('\n'),
    );
    // A session led from outside the sandbox's pid namespace would show as session 0.
    expect(result.stdout).toMatch(/^session [1-9]\d*\nno-tty\n$/);
  });
});

describe('processes', () => {
  test('a command past its limit is killed and says it timed out', async () => {
    const ws = makeWorkspace({});
    const result = await run(ws, `echo started; exec -a ${MARK}-sleeper sleep 1000`, { timeoutMs: 1_500 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.stdout).toBe('started\n');
    expectNothingLeft();
  });

  test('nothing started in the background runs on after the call returns', async () => {
    const ws = makeWorkspace({});
    const result = await run(
      ws,
      [
        `(exec -a ${MARK}-background sleep 1000) &`,
        `setsid nohup bash -c 'exec -a ${MARK}-setsid sleep 1000' > /dev/null 2>&1 &`,
        `( ( exec -a ${MARK}-double-fork sleep 1000 & ) & )`,
        `nohup bash -c 'trap "" HUP TERM; exec -a ${MARK}-ignoring sleep 1000' > /dev/null 2>&1 &`,
        'sleep 0.3',
        `ps -eo args | grep -c '^${MARK}'`,
      ].join('\n'),
    );
    expect(result.exitCode).toBe(0);
    // All four were running inside before the command ended.
    expect(result.stdout.trim()).toBe('4');
    expectNothingLeft();
  });

  test('a fork bomb is held to the process limit and cleaned up', async () => {
    const ws = makeWorkspace({});
    const result = await run(ws, `bomb() { bomb | bomb & }; bomb; sleep 2; echo survived`, {
      timeoutMs: 4_000,
      limits: { maxProcesses: 32 },
    });
    expect(result.stderr).toMatch(/fork|Resource temporarily unavailable/);
    expectNothingLeft();
  });

  test('a flood of output is clipped in the answer and capped in what is stored', async () => {
    const ws = makeWorkspace({});
    const stdoutBytes = 64 * 1024 * 1024;
    const stderrBytes = 8 * 1024 * 1024;
    const result = await run(
      ws,
      `echo first-line; head -c ${stdoutBytes} /dev/zero | tr '\\0' x; echo; echo last-line; head -c ${stderrBytes} /dev/zero | tr '\\0' e >&2`,
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout.startsWith('first-line\n')).toBe(true);
    expect(result.stdout.endsWith('last-line\n')).toBe(true);
    const total = stdoutBytes + 'first-line\n'.length + '\nlast-line\n'.length;
    expect(result.stdout).toContain(`... ${total - ANSWER_HEAD_BYTES - ANSWER_TAIL_BYTES} bytes cut ...`);
    expect(result.stdout.length).toBeLessThan(ANSWER_HEAD_BYTES + ANSWER_TAIL_BYTES + 100);
    expect(result.stderr).toContain(
      `... ${stderrBytes - ANSWER_HEAD_BYTES - ANSWER_TAIL_BYTES} bytes cut ...`,
    );
    expect(result.output.stdout).toContain(
      `... ${total - STORED_HEAD_BYTES - STORED_TAIL_BYTES} bytes cut ...`,
    );
    expect(result.output.stdout.length).toBeLessThan(STORED_HEAD_BYTES + STORED_TAIL_BYTES + 100);
    expect(result.output.stderr.length).toBeLessThan(STORED_HEAD_BYTES + STORED_TAIL_BYTES + 100);
  });
});

describe('without a sandbox (ACA_SANDBOX=none)', () => {
  test('the command runs with the warning, its streams apart, and what it left running is swept', async () => {
    const ws = makeWorkspace({});
    const result = await run(
      ws,
      `echo out; echo err >&2; (exec -a ${MARK}-bare-background sleep 1000) & setsid bash -c 'exec -a ${MARK}-bare-setsid sleep 1000' & sleep 0.2`,
      { mode: 'none' },
    );
    expect(result).toMatchObject({ exitCode: 0, stdout: 'out\n', stderr: 'err\n', timedOut: false });
    expect(result.sandboxWarning).toMatch(/ACA_SANDBOX=none/);
    expect(pidsWithMarker(MARK)).toEqual([]);
  });

  // Only a sandbox mounts the work tree read-only; bare, a Planner's command would write it.
  test('a read-only command is refused, and nothing of it runs', async () => {
    const ws = makeWorkspace({ 'a.txt': 'a\n' });
    await expect(
      run(ws, 'echo changed > a.txt; touch b.txt', { mode: 'none', readOnly: true }),
    ).rejects.toThrow(/needs the sandbox.*ACA_SANDBOX=none/);
    expect(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('a\n');
    expect(fs.existsSync(path.join(ws, 'b.txt'))).toBe(false);
  });
});

describe("the worker's secrets", () => {
  test("the worker's environment is not the command's, nor anything of it under /proc", async () => {
    expect(process.env.OPENAI_API_KEY).toBe(SECRET);
    const ws = makeWorkspace({});
    const result = await run(
      ws,
      'env; cat /proc/1/environ; for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done; ls /proc',
    );
    expect(result.exitCode).toBe(0);
    expect(result.output.stdout).toContain('HOME=/tmp');
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(result.output.stdout).not.toContain('OPENAI_API_KEY');
    expect(result.output.stdout).not.toContain('DATABASE_URL');
  });

  // The user keyring: every process of the worker's uid shares it, as the worker's session keyring
  // is shared by its children (this Jest process has no session keyring of its own to add to).
  test("a key in the worker's keyring cannot be found or read", async () => {
    const arch = seccompArchOf();
    if (!arch) throw new Error('no seccomp numbers for this machine');
    const keyctl = DENIED_SYSCALLS.keyctl![arch];
    const addKey = DENIED_SYSCALLS.add_key![arch];
    const name = `${MARK}-worker-key`;
    const python = (code: string) => spawnSync('/usr/bin/python3', ['-c', code], { encoding: 'utf8' });
    const prelude = 'import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n';
    const search = `${prelude}print(libc.syscall(${keyctl}, 10, -4, b"user", b"${name}", 0))`;
    const added = python(
      `${prelude}print(libc.syscall(${addKey}, b"user", b"${name}", b"${SECRET}", ${SECRET.length}, -4))`,
    );
    const key = Number(added.stdout.trim());
    expect(key).toBeGreaterThan(0);
    try {
      // The worker itself finds its key: a miss inside is the sandbox's doing.
      expect(Number(python(search).stdout.trim())).toBe(key);
      const ws = makeWorkspace({});
      const result = await run(
        ws,
        [
          `/usr/bin/python3 -c '${search.replace(/'/g, "'\\''")}'`,
          `/usr/bin/python3 -c '${search.replace(/'/g, "'\\''").replace(', -4,', ', -3,')}'`,
          `/usr/bin/python3 -c '${prelude}import ctypes; b = ctypes.create_string_buffer(64); print(libc.syscall(${keyctl}, 11, ${key}, b, 64), b.value)'`,
          'cat /proc/keys',
        ].join('\n'),
      );
      const lines = result.stdout.trim().split('\n');
      // Not in the sandbox's user keyring nor its session keyring, and not readable by its serial.
      expect(Number(lines[0])).toBeLessThan(0);
      expect(Number(lines[1])).toBeLessThan(0);
      expect(lines[2]).toMatch(/^-1 /);
      expect(JSON.stringify(result)).not.toContain(SECRET);
      expect(result.output.stdout).not.toContain(name);
    } finally {
      python(`${prelude}libc.syscall(${keyctl}, 9, ${key}, -4)`);
    }
  });
});
