/**
 * The sandbox escape cases measured against the clock or the machine's memory (a fork bomb, CPU
 * seconds, wall timeouts, a flood on stdout, the run's memory cgroup), and the one that needs
 * services on the fixed ports 5432 and 7233: they want the cores and the ports to themselves, so
 * this suite runs alone, before the others (jest.config.js). The other escape cases are in
 * escape.test.ts.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type * as net from 'node:net';
import * as path from 'node:path';
import { acquireCgroupLauncher, DEFAULT_SANDBOX_LIMITS, isRoot, runTestSuite } from '../../src/sandbox';
import { byName, watchHost } from '../helpers/escape-host';
import { canConnect, ensureListening, sandboxUidPids } from '../helpers/host-probes';
import { makeWorkspace } from '../helpers/workspace-fixture';

const servers: net.Server[] = [];
let httpServer: http.Server;
let httpPort = 0;
let httpHits = 0;

watchHost();

beforeAll(async () => {
  for (const port of [5432, 7233]) {
    const server = await ensureListening(port);
    if (server) servers.push(server);
  }
  httpServer = http.createServer((_req, res) => {
    httpHits++;
    res.end('host http');
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  httpPort = (httpServer.address() as net.AddressInfo).port;
});

afterAll(() => {
  for (const server of servers) server.close();
  httpServer.close();
});

describe('network', () => {
  test('host services, DNS and the outside are unreachable', async () => {
    // The services are really there for the host, so failing inside means isolation, not absence.
    expect(await canConnect(5432)).toBe(true);
    expect(await canConnect(7233)).toBe(true);
    const ws = makeWorkspace({
      'test_net.py': `
import socket
import urllib.request

def test_postgres():
    socket.create_connection(("127.0.0.1", 5432), timeout=3).close()

def test_temporal():
    socket.create_connection(("127.0.0.1", 7233), timeout=3).close()

def test_host_http():
    urllib.request.urlopen("http://127.0.0.1:${httpPort}/", timeout=3).read()

def test_dns():
    assert socket.getaddrinfo("example.com", 80)

def test_http_out():
    urllib.request.urlopen("http://example.com/", timeout=3).read()

def test_raw_ip_out():
    socket.create_connection(("1.1.1.1", 80), timeout=3).close()
`,
    });
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
    expect(report.outcome).toBe('completed');
    expect([report.passed, report.failed]).toEqual([0, 6]);
    const cases = byName(report);
    expect(cases.test_postgres.message).toMatch(/Connection refused/);
    expect(cases.test_temporal.message).toMatch(/Connection refused/);
    expect(cases.test_raw_ip_out.message).toMatch(/Network is unreachable/);
    expect(httpHits).toBe(0);
  });
});

describe('resource limits', () => {
  const rootOnly = isRoot() ? test : test.skip; // a run gets a memory cgroup only when the worker is root

  test('a fork bomb is capped and killed at the wall timeout; the host can still fork', async () => {
    const ws = makeWorkspace({
      'test_bomb.py': `
import os

def test_fork_bomb():
    while True:
        try:
            os.fork()
        except OSError:
            pass
`,
    });
    const maxProcesses = 48;
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, sandboxUidPids({ includeZombies: true }).length);
    }, 100);
    const started = Date.now();
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      limits: { wallTimeoutMs: 6000, maxProcesses },
    });
    clearInterval(sampler);
    expect(report.outcome).toBe('timeout');
    expect(report.passRate).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    // Inside the limit, plus bwrap's monitor and init, and a few exited children the sampler
    // catches before they are reaped; an uncapped bomb would reach thousands.
    expect(peak).toBeGreaterThan(maxProcesses / 2);
    expect(peak).toBeLessThanOrEqual(maxProcesses + 8);
    expect(spawnSync('true').status).toBe(0);
  });

  test('allocating 4 GiB is stopped: by the run cgroup where there is one, else inside the test', async () => {
    const ws = makeWorkspace({
      'test_mem.py': `
def test_allocate_4gib():
    block = bytearray(4 * 1024 ** 3)
    assert len(block) > 0
`,
    });
    const probe = isRoot() ? acquireCgroupLauncher(DEFAULT_SANDBOX_LIMITS.runMemoryBytes, 64) : null;
    probe?.release();
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
    expect(report.passed).toBe(0);
    if (probe) {
      // The kernel kills the process at the run's memory; the report says which limit it was.
      expect(report.message).toMatch(
        /^the run's memory limit of 2048 MiB was hit: the kernel killed \d+ of its processes/,
      );
    } else {
      expect(report.failed).toBe(1);
      expect(report.cases[0].message).toMatch(/MemoryError/);
    }
  });

  test('an endless loop times out and is killed', async () => {
    const ws = makeWorkspace({ 'test_loop.py': 'def test_forever():\n    while True:\n        pass\n' });
    const started = Date.now();
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      limits: { wallTimeoutMs: 3000 },
    });
    expect(report.outcome).toBe('timeout');
    expect(report.passRate).toBe(0);
    expect(report.message).toMatch(/3000 ms/);
    expect(Date.now() - started).toBeLessThan(8000);
  });

  test('CPU seconds are limited even when wall time is generous', async () => {
    const ws = makeWorkspace({ 'test_spin.py': 'def test_spin():\n    while True:\n        pass\n' });
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      limits: { cpuSeconds: 2, wallTimeoutMs: 30_000 },
    });
    expect(report.outcome).toBe('collection_error');
    expect(report.passRate).toBe(0);
    expect(report.durationMs).toBeLessThan(10_000);
    expect(report.message).toMatch(/killed|exited/);
  });

  test('1 GiB on stdout is cut to the tail without filling memory or disk', async () => {
    const ws = makeWorkspace({
      'test_flood.py': `
import os, sys

CHUNK = b"x" * (1 << 20)

def test_print_a_gib():
    # pytest captures this into a file, which the file-size limit stops.
    for _ in range(1024):
        sys.stdout.write(CHUNK.decode())

def test_raw_gib_to_real_stdout(capsys):
    with capsys.disabled():
        for _ in range(1024):
            os.write(1, CHUNK)
        os.write(1, b"\\nEND-OF-FLOOD\\n")
`,
    });
    const rssBefore = process.memoryUsage().rss;
    const outputBytes = 16 * 1024;
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      limits: { outputBytes, maxFileBytes: 8 * 1024 * 1024, wallTimeoutMs: 60_000 },
    });
    const cases = byName(report);
    expect(cases.test_print_a_gib.status).toBe('failed');
    expect(cases.test_print_a_gib.message).toMatch(/File too large/);
    expect(Buffer.byteLength(report.output)).toBeLessThanOrEqual(outputBytes);
    expect(report.cutBytes).toBeGreaterThan(1024 ** 3);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
    // Nothing big was left in the workspace.
    const sizes = fs.readdirSync(ws).map((f) => fs.statSync(path.join(ws, f)).size);
    expect(Math.max(...sizes)).toBeLessThan(1024 * 1024);
  });

  rootOnly("memory is limited for all of a run's processes together, not only per process", async () => {
    const ws = makeWorkspace({
      'test_memory.py': `
import os, time

def test_four_children_of_700_mib():
    children = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            block = bytearray(700 * 1024 * 1024)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(3)
            os._exit(0)
        children.append(pid)
    statuses = [os.waitpid(pid, 0)[1] for pid in children]
    assert statuses == [0, 0, 0, 0], statuses
`,
    });
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
    // 2.8 GiB held at once, each child under the 1 GiB per-process limit: the run's 2 GiB stops it.
    expect(byName(report).test_four_children_of_700_mib.status).toBe('failed');
    // A child killed by the kernel's OOM killer: wait status 9 (SIGKILL).
    expect(byName(report).test_four_children_of_700_mib.message).toMatch(/\b9\b/);
  });
});
