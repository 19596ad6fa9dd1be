/**
 * The embedded database (PGlite) is served on a unix socket under ACA_HOME, in a folder only the
 * worker's user may enter; with the system's temporary folder instead when that path is too long.
 * Nothing on that socket asks for a password: whoever connects reads and writes every run's
 * failures. Model-written code run by the sandbox, with its workspace under the same ACA_HOME as
 * the worker's runs have, must neither reach either socket nor see that anything is there.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { openPglitePool, type PglitePool } from '../../src/memory/pglite-pool';
import { PgliteServer, SOCKET_PORT } from '../../src/memory/pglite-server';
import { releaseWorkspace, runTestSuite } from '../../src/sandbox';
import type { TestRunReport } from '../../src/shared/types';
import { sandboxUidPids } from '../helpers/host-probes';

const SOCKET_NAME = `.s.PGSQL.${SOCKET_PORT}`;
const py = (s: string): string => JSON.stringify(s);

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-home-'));
const workspace = path.join(home, 'workspaces', 'run-1');
let memory: PglitePool;
let fallback: PgliteServer;
let fallbackData: string;

/** Whether a unix socket answers a connection from the host. */
function hostCanConnect(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const client = net.connect(socket);
    client.once('connect', () => {
      client.destroy();
      resolve(true);
    });
    client.once('error', () => resolve(false));
  });
}

beforeAll(async () => {
  // As the worker lays it out: ACA_HOME/memory holds the database and its socket folder.
  memory = await openPglitePool(path.join(home, 'memory'));
  // A socket folder whose path is too long for a unix socket: the server falls back to a private
  // folder under the system's temporary folder.
  fallbackData = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-pglite-data-'));
  fallback = await PgliteServer.start(fallbackData, path.join(home, 'x'.repeat(120), 'socket'));
});

afterAll(async () => {
  await memory?.pool.end();
  await memory?.close();
  await fallback?.stop();
  fs.rmSync(fallbackData, { recursive: true, force: true });
  fs.rmSync(home, { recursive: true, force: true });
});

afterEach(async () => {
  for (let waited = 0; waited < 3_000 && sandboxUidPids().length > 0; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(sandboxUidPids()).toEqual([]);
});

/** The probes that reach both sockets from any process of the host: a failure means isolation. */
function reachProbes(sockets: string[]): string {
  return `
import os
import socket

SOCKETS = [${sockets.map(py).join(', ')}]
HOME = ${py(home)}
WORKSPACE = ${py(workspace)}


def _connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(path)
    finally:
        s.close()


def test_connect_memory_socket():
    _connect(SOCKETS[0])


def test_connect_fallback_socket():
    _connect(SOCKETS[1])


def test_see_socket_folders():
    for path in SOCKETS:
        os.stat(os.path.dirname(path))


def test_see_aca_home():
    os.listdir(HOME)


def test_from_the_workspace_upwards():
    # The workspace's neighbours by relative path, as from a test's own folder.
    _connect(os.path.normpath(os.path.join(os.getcwd(), os.path.relpath(SOCKETS[0], WORKSPACE))))
`;
}

/** What only the sandbox is asked: other ways to a socket, and any trace of its folder. */
const SANDBOX_PROBES = `
import stat


def test_through_proc_roots():
    tried = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for path in SOCKETS:
            try:
                _connect("/proc/" + pid + "/root" + path)
                return
            except OSError as err:
                tried.append(str(err))
    raise AssertionError("no way through /proc: " + "; ".join(sorted(set(tried))))


def test_listed_in_proc_net_unix():
    with open("/proc/net/unix") as f:
        listing = f.read()
    assert any(path in listing for path in SOCKETS), listing


def test_socket_folder_named_anywhere():
    texts = []
    for name in ("/proc/self/mountinfo", "/proc/self/environ", "/proc/self/cmdline"):
        with open(name, "rb") as f:
            texts.append(f.read().decode("utf8", "replace"))
    assert any(os.path.dirname(path) in text for path in SOCKETS for text in texts), "the socket folders are named nowhere"


def test_any_socket_anywhere():
    found = []
    for root, dirs, files in os.walk("/"):
        if root in ("/proc", "/sys"):
            dirs[:] = []
            continue
        for name in dirs + files:
            full = os.path.join(root, name)
            try:
                mode = os.lstat(full).st_mode
            except OSError:
                continue
            if name.startswith(".s.PGSQL") or stat.S_ISSOCK(mode):
                found.append(full)
    assert found, "no socket is visible"
`;

const REACH_PROBES = [
  'test_connect_memory_socket',
  'test_connect_fallback_socket',
  'test_see_socket_folders',
  'test_see_aca_home',
  'test_from_the_workspace_upwards',
];

test('sandboxed code can neither connect to the embedded database socket nor see it', async () => {
  const socket = path.join(home, 'memory', 'socket', SOCKET_NAME);
  const fallbackSocket = path.join(fallback.socketDir, SOCKET_NAME);
  expect(fallbackSocket.startsWith(os.tmpdir())).toBe(true);
  // Both are really there and answer the host, so failing inside means isolation, not absence.
  expect((await memory.pool.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
  expect(await hostCanConnect(socket)).toBe(true);
  expect(await hostCanConnect(fallbackSocket)).toBe(true);

  // Without the sandbox, from the same workspace, the probes do reach both sockets.
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'test_memory_socket.py'), reachProbes([socket, fallbackSocket]));
  const bare = await runTestSuite({ workspace, language: 'python', mode: 'none' });
  expect([bare.outcome, bare.passed, bare.failed]).toEqual(['completed', REACH_PROBES.length, 0]);

  fs.writeFileSync(
    path.join(workspace, 'test_memory_socket.py'),
    reachProbes([socket, fallbackSocket]) + SANDBOX_PROBES,
  );
  const report: TestRunReport = await runTestSuite({ workspace, language: 'python', mode: 'bwrap' });
  await releaseWorkspace(workspace);
  const cases = Object.fromEntries(report.cases.map((c) => [c.name.split('::').pop()!, c]));
  expect(report.outcome).toBe('completed');
  expect([report.passed, report.failed]).toEqual([0, REACH_PROBES.length + 4]);
  // Not refused but absent: the paths do not exist in the sandbox at all.
  for (const name of REACH_PROBES) {
    expect(`${name}: ${cases[name]?.message ?? 'missing'}`).toMatch(
      /FileNotFoundError|No such file or directory/,
    );
  }
  expect(cases.test_socket_folder_named_anywhere?.message).toMatch(/the socket folders are named nowhere/);
  expect(cases.test_any_socket_anywhere?.message).toMatch(/no socket is visible/);

  // The database still answers its own process, and the sandbox left nothing beside its workspace.
  expect((await memory.pool.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
  expect(fs.readdirSync(home).sort()).toEqual(['memory', 'workspaces']);
  expect(fs.readdirSync(path.join(home, 'memory', 'socket'))).toEqual([SOCKET_NAME]);
});
