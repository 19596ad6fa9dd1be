/**
 * Attacks on lending the workspace to the sandbox uid for a run's life (workspace-ownership.ts):
 * the contents stay with one sandbox uid between test runs, each run lends only what is new, modes
 * are stripped after each run and everything goes back to the owner at the run's end. Each test is
 * named after the attack; the host is checked afterwards rather than the report trusted.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HostRuns } from '../../src/repo';
import { prepareRun } from '../../src/activities/repo-activities';
import { isRoot, lendWorkspace, releaseWorkspace, runTestSuite } from '../../src/sandbox';
import { sandboxUidPids } from '../helpers/host-probes';
import { makeWorkspace, removeWorkspaces, snapshotOwners } from '../helpers/workspace-fixture';

// Lending is chown to another uid: only a root worker lends, so only as root is there a lease to attack.
const rootOnly = isRoot() ? test : test.skip;
const py = (s: string): string => JSON.stringify(s);
/** Owner of the host files the attacks aim at: a uid that is neither root nor a sandbox uid. */
const VICTIM_UID = 4242;

const hostDirs: string[] = [];
function hostVictims(count: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-lease-victim-'));
  hostDirs.push(dir);
  for (let i = 0; i < count; i++) {
    const file = path.join(dir, `v${i}`);
    fs.writeFileSync(file, 'host\n', { mode: 0o4755 });
    fs.chownSync(file, VICTIM_UID, VICTIM_UID);
    fs.chmodSync(file, 0o4755);
  }
  return dir;
}

/** The host victims no longer as they were (owner, and the setuid mode they had), with what they are now. */
function victimsTouched(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .map((name) => {
      const st = fs.lstatSync(path.join(dir, name));
      const touched = st.uid !== VICTIM_UID || st.gid !== VICTIM_UID || (st.mode & 0o7777) !== 0o4755;
      return touched ? `${name} ${st.uid}:${st.gid}:${(st.mode & 0o7777).toString(8)}` : '';
    })
    .filter(Boolean)
    .sort();
}

async function waitForFile(file: string, timeoutMs: number): Promise<void> {
  for (let waited = 0; !fs.existsSync(file); waited += 50) {
    if (waited > timeoutMs) throw new Error(`${file} did not appear`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A test that, as the sandbox uid, makes `d/v0..` (its own files), a link `swap` to a host folder,
 * and then swaps the two with RENAME_EXCHANGE in a loop until `seconds` pass: any walk of the host
 * that reaches `d/vN` by its path meanwhile may land in the host folder. The workspace folder is
 * made 0777 first, so the swaps go on after a walk has changed its owner.
 */
function swapperTest(hostDir: string, count: number, seconds: number): string {
  return `
import ctypes, os, time

def test_swap():
    libc = ctypes.CDLL(None, use_errno=True)
    # Still writable by the uid once the walk has given the folder to someone else.
    os.chmod(".", 0o777)
    os.mkdir("d")
    for i in range(${count}):
        open("d/v%d" % i, "w").close()
    os.symlink(${py(hostDir)}, "swap")
    open("started", "w").close()
    end = time.time() + ${seconds}
    while time.time() < end:
        libc.renameat2(-100, b"d", -100, b"swap", 2)
`;
}

afterEach(async () => {
  for (let waited = 0; waited < 3_000 && sandboxUidPids().length > 0; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(sandboxUidPids()).toEqual([]);
});

afterAll(() => {
  removeWorkspaces();
  for (const dir of hostDirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A sandboxed test that keeps swapping a folder for a link to host files, once it is going. */
async function startSwapper() {
  const count = 300;
  const hostDir = hostVictims(count);
  const ws = makeWorkspace({ 'test_swap.py': swapperTest(hostDir, count, 8) });
  const running = runTestSuite({
    workspace: ws,
    language: 'python',
    mode: 'bwrap',
    limits: { wallTimeoutMs: 20_000 },
  });
  await waitForFile(path.join(ws, 'started'), 15_000);
  await new Promise((r) => setTimeout(r, 200));
  return { hostDir, ws, running };
}

describe('racing the walks', () => {
  rootOnly(
    "releaseWorkspace while a cancelled run's tests still run (the workflow does not wait for them) does not chown through a swapped folder",
    async () => {
      const { hostDir, ws, running } = await startSwapper();
      // What run-ending.ts does at once when a run is cancelled mid-test.
      await releaseWorkspace(ws);
      await running;
      await releaseWorkspace(ws);
      expect(victimsTouched(hostDir)).toEqual([]);
    },
    60_000,
  );

  rootOnly(
    'a second test run of the same workspace while the first still runs (a retried attempt) does not lend host files through a swapped folder',
    async () => {
      const { hostDir, ws, running: first } = await startSwapper();
      const second = await lendWorkspace(ws);
      await first;
      expect(second.uid).toBeGreaterThan(0);
      await releaseWorkspace(ws);
      expect(victimsTouched(hostDir)).toEqual([]);
    },
    60_000,
  );
});

describe('the owner of the workspace', () => {
  rootOnly(
    "prepareRun's first lend does not lose the workspace's owner: the run's end gives everything back to it, not to root",
    async () => {
      const OWNER = 4343;
      const ws = makeWorkspace({});
      const gitDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-lease-git-'));
      hostDirs.push(gitDir);
      fs.chownSync(ws, OWNER, OWNER);
      await prepareRun(
        {
          workflowId: `lease-${process.pid}`,
          workspace: ws,
          language: 'python',
          repo: null,
          testCommand: null,
          setupCommand: null,
        },
        'bwrap',
        null,
        new HostRuns({
          store: null,
          home: gitDir,
          workspacesRoot: gitDir,
          author: { name: 'aca', email: 'aca@localhost' },
        }),
      );
      // The Coder writes the solution and its test (as root); the tests run; the run ends.
      fs.writeFileSync(
        path.join(ws, 'test_ok.py'),
        'def test_ok():\n    open("made-by-test", "w").close()\n',
      );
      const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
      expect(report.passed).toBe(1);
      expect(fs.lstatSync(ws).uid).toBe(OWNER);
      await releaseWorkspace(ws);
      expect(fs.lstatSync(ws).uid).toBe(OWNER);
      expect(fs.lstatSync(path.join(ws, 'made-by-test')).uid).toBe(OWNER);
    },
    60_000,
  );
});

describe('what the sandbox uid leaves in the tree', () => {
  rootOnly(
    'hard links to host files cannot be made (a bind mount: EXDEV), so no lend or release changes a host file through one',
    async () => {
      const hostDir = hostVictims(1);
      const ws = makeWorkspace({
        'mine.txt': 'inside\n',
        'test_links.py': `
import errno, os

def test_links():
    failures = {}
    for target in ["/usr/bin/env", "/etc/passwd", "/etc/ld.so.cache", ${py(path.join(hostDir, 'v0'))}]:
        try:
            os.link(target, "link-" + os.path.basename(target))
            failures[target] = "linked"
        except OSError as e:
            failures[target] = errno.errorcode[e.errno]
    # A link inside the workspace is the uid's own business.
    os.link("mine.txt", "mine-again.txt")
    # Nor can the uid give a file to root (unmapped in its user namespace), nor make it setuid root.
    try:
        os.chown("mine.txt", 0, 0)
        failures["chown"] = "done"
    except OSError as e:
        failures["chown"] = errno.errorcode[e.errno]
    assert failures == {
        "/usr/bin/env": "EXDEV", "/etc/passwd": "EXDEV", "/etc/ld.so.cache": "EXDEV",
        ${py(path.join(hostDir, 'v0'))}: "ENOENT", "chown": "EINVAL",
    }
`,
      });
      const envBefore = fs.lstatSync('/usr/bin/env');
      const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
      expect(report.cases.map((c) => c.message ?? '')).toEqual(['']);
      expect(report.passed).toBe(1);
      await releaseWorkspace(ws);
      expect(fs.lstatSync(path.join(ws, 'mine-again.txt')).ino).toBe(
        fs.lstatSync(path.join(ws, 'mine.txt')).ino,
      );
      expect(fs.lstatSync(path.join(ws, 'mine-again.txt')).uid).toBe(0);
      const envAfter = fs.lstatSync('/usr/bin/env');
      expect([envAfter.uid, envAfter.gid, envAfter.mode]).toEqual([
        envBefore.uid,
        envBefore.gid,
        envBefore.mode,
      ]);
      expect(victimsTouched(hostDir)).toEqual([]);
    },
    60_000,
  );

  rootOnly(
    'names that look like options (--reference=, -R, -h) or hold a newline, and links to host files, in a tree walked by find: nothing outside changes',
    async () => {
      const hostDir = hostVictims(1);
      const victim = path.join(hostDir, 'v0');
      const files: Record<string, string> = {
        'test_names.py': `
import os

def test_names():
    for name in ["--reference=-R", "-R", "a\\nb", "-", "--"]:
        with open(name, "w") as f:
            f.write("x")
        os.chmod(name, 0o6777)
    os.symlink(${py(victim)}, "-h")
    os.symlink(${py(hostDir)}, "--dir")
    os.symlink(${py(hostDir)}, "sub\\n..")
    os.mkdir("-P")
    os.chmod("-P", 0o3777)
`,
      };
      for (let i = 0; i < 2_100; i++) files[`data/${i}.txt`] = `${i}\n`;
      const ws = makeWorkspace(files);
      const first = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
      expect(first.cases.map((c) => c.message ?? '')).toEqual(['']);
      for (const name of ['--reference=-R', '-R', 'a\nb', '-', '--', '-P'])
        expect(fs.lstatSync(path.join(ws, name)).mode & 0o7022).toBe(0);
      // The Coder adds a file; the next run lends it, then the run ends.
      fs.writeFileSync(path.join(ws, '-new'), 'x');
      await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
      await releaseWorkspace(ws);
      const owners = new Set(Object.values(snapshotOwners(ws)).map((o) => o.split(':')[0]));
      expect([...owners]).toEqual(['0']);
      expect(victimsTouched(hostDir)).toEqual([]);
      expect(fs.readdirSync(hostDir)).toEqual(['v0']);
    },
    120_000,
  );
});

describe('processes of the uid after a run', () => {
  const SYS_EXIT: Record<string, number> = { x86_64: 60, aarch64: 93 };
  const sysExit = SYS_EXIT[os.arch() === 'arm64' ? 'aarch64' : 'x86_64'];

  rootOnly(
    "a thread that outlives its process's main thread (a zombie leader, which the uid's process sweep skips) is gone before the walk",
    async () => {
      const ws = makeWorkspace({
        'test_zombie_leader.py': `
import ctypes, os, threading, time

def beat():
    n = 0
    while True:
        n += 1
        with open("beat", "w") as f:
            f.write(str(n))
        time.sleep(0.01)

def test_leader_exits():
    if os.fork() == 0:
        os.setsid()
        threading.Thread(target=beat, daemon=False).start()
        time.sleep(0.2)
        # exit(2) ends only the calling thread: the leader becomes a zombie, its thread runs on.
        ctypes.CDLL(None).syscall(${sysExit}, 0)
    time.sleep(0.5)
`,
      });
      const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
      expect(report.passed).toBe(1);
      const beats = fs.readFileSync(path.join(ws, 'beat'), 'utf8');
      await new Promise((r) => setTimeout(r, 500));
      expect(fs.readFileSync(path.join(ws, 'beat'), 'utf8')).toBe(beats);
      expect(sandboxUidPids()).toEqual([]);
      await releaseWorkspace(ws);
    },
    60_000,
  );
});

describe("runTestSuite's mode 'none'", () => {
  test("lends nothing: the owners stay, what the test writes is the worker's", async () => {
    const ws = makeWorkspace({ 'test_ok.py': 'def test_ok():\n    open("out.txt", "w").close()\n' });
    const owners = snapshotOwners(ws);
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'none' });
    expect(report.passed).toBe(1);
    // What was there before keeps its owner and mode (pytest's caches and out.txt are new).
    const after = snapshotOwners(ws);
    expect(Object.fromEntries(Object.keys(owners).map((key) => [key, after[key]]))).toEqual(owners);
    expect(fs.lstatSync(path.join(ws, 'out.txt')).uid).toBe(process.getuid!());
  });
});

describe('two runs lent at once', () => {
  rootOnly(
    'two workspaces lent at the same time go to different uids, even when the random pick lands on the same one',
    async () => {
      const a = makeWorkspace({ 'a.txt': 'a\n' });
      const b = makeWorkspace({ 'b.txt': 'b\n' });
      const realRandom = Math.random.bind(Math);
      const random = jest.spyOn(Math, 'random').mockImplementation(realRandom);
      try {
        random.mockReturnValueOnce(0.5);
        const first = await lendWorkspace(a);
        // The second pick tries the first one's uid before any other.
        random.mockReturnValueOnce(0.5);
        const second = await lendWorkspace(b);
        expect(second.uid).not.toBe(first.uid);
        expect(fs.lstatSync(path.join(a, 'a.txt')).uid).toBe(first.uid);
        expect(fs.lstatSync(path.join(b, 'b.txt')).uid).toBe(second.uid);
      } finally {
        random.mockRestore();
        await releaseWorkspace(a);
        await releaseWorkspace(b);
      }
    },
  );
});
