/**
 * Test processes are started by a small helper process (src/process/spawn-helper.ts). What the
 * sandbox relies on must hold through it exactly as with a direct spawn: output, exit codes,
 * start errors, process groups that can be killed, bounded output, nothing lost when a process
 * ends at once.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type ProcessRunOptions, runProcessTree, spawnDirect, spawnViaHelper } from '../../../src/sandbox';
import { until } from '../../helpers/until';

const base = (command: string, args: string[]): ProcessRunOptions => ({
  command,
  args,
  env: { PATH: '/usr/bin:/bin' },
  cwd: '/tmp',
  wallTimeoutMs: 20_000,
  outputBytes: 64 * 1024,
});

const isAlive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat); // a zombie is dead, only not yet reaped
  } catch {
    return false;
  }
};

describe.each([
  ['through the helper', spawnViaHelper],
  ['directly', spawnDirect],
])('process trees started %s', (_how, spawn) => {
  test('output of both streams and the exit code come back', async () => {
    const r = await runProcessTree({
      ...base('/bin/sh', ['-c', 'echo to-out; echo to-err >&2; exit 3']),
      spawn,
    });
    expect(r.exitCode).toBe(3);
    expect(r.timedOut).toBe(false);
    const text = r.output.toString();
    expect(text).toContain('to-out');
    expect(text).toContain('to-err');
  });

  test('a command that does not exist rejects with ENOENT', async () => {
    await expect(runProcessTree({ ...base('/no/such/binary', []), spawn })).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  test('the environment is exactly the one given', async () => {
    const r = await runProcessTree({
      ...base('/usr/bin/env', []),
      env: { ONLY_THIS: 'yes' },
      spawn,
    });
    expect(r.output.toString().trim()).toBe('ONLY_THIS=yes');
  });

  test('processes that end at once lose no event', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        runProcessTree({ ...base('/bin/sh', ['-c', `echo ${i}; exit ${i % 3}`]), spawn }),
      ),
    );
    results.forEach((r, i) => {
      expect(r.exitCode).toBe(i % 3);
      expect(r.output.toString().trim()).toBe(String(i));
    });
  });

  test('a timeout kills the whole process group, grandchildren included', async () => {
    const pidFile = `/tmp/aca-spawn-helper-test-${process.pid}-${Math.random().toString(16).slice(2)}`;
    const r = await runProcessTree({
      ...base('/bin/sh', ['-c', `sleep 60 & echo $! > ${pidFile}; wait`]),
      wallTimeoutMs: 1000,
      spawn,
    });
    expect(r.timedOut).toBe(true);
    const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
    fs.rmSync(pidFile, { force: true });
    expect(grandchild).toBeGreaterThan(1);
    for (let i = 0; i < 50 && isAlive(grandchild); i++) await new Promise((res) => setTimeout(res, 100));
    expect(isAlive(grandchild)).toBe(false);
  });

  test('a flood of output ends with only the bounded tail kept', async () => {
    const r = await runProcessTree({
      ...base('/bin/sh', ['-c', 'head -c 20000000 /dev/zero | tr "\\0" x; echo; echo THE-END']),
      outputBytes: 4096,
      spawn,
    });
    expect(r.exitCode).toBe(0);
    const text = r.output.toString();
    expect(text.length).toBeLessThanOrEqual(4096 + 200);
    expect(text).toContain('THE-END');
  });

  test('an abort kills the process', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const r = await runProcessTree({ ...base('/bin/sleep', ['30']), signal: controller.signal, spawn });
    expect(r.aborted).toBe(true);
    expect(r.durationMs).toBeLessThan(20_000);
  });
});

describe('the spawn helper when the worker dies', () => {
  test('a SIGKILLed worker takes the test processes it started with it', async () => {
    // A stand-in worker: starts a long test process through the helper, prints its pid, waits.
    const helperModule = path.resolve(__dirname, '..', '..', '..', 'dist', 'sandbox', 'index.js');
    const worker = spawn(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(helperModule)})
          .spawnViaHelper({ command: '/bin/sleep', args: ['300'], cwd: '/tmp', env: { PATH: '/usr/bin:/bin' } })
          .then((p) => { p.resume(); console.log(p.pid); });
         setInterval(() => undefined, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    worker.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => /^\d+\n/.test(out), 20_000, 'the test process to start');
    const testPid = Number(out.trim());
    expect(isAlive(testPid)).toBe(true);

    worker.kill('SIGKILL');
    await until(() => !isAlive(testPid), 10_000, `test process ${testPid} to be killed`);
  });
});
