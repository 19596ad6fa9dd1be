/**
 * The sandbox around a test run in a run another host adopted from the git store (see
 * host-runs.ts): its work tree under the adopting host's workspaces root, its git directory and
 * the `--tests` originals written from a commit under that host's ACA_HOME, beside its disk id.
 * The code under test tries every way it has to reach them; the host is checked afterwards
 * rather than the report trusted.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pushRunCommit, parseGitStoreLocation, HostRuns, createFreshRunRepository } from '../../src/repo';
import { releaseWorkspace, runTestSuite } from '../../src/sandbox';
import type { RunPlace } from '../../src/shared/run-types';

const py = (s: string): string => JSON.stringify(s);
const AUTHOR = { name: 'aca', email: 'aca@localhost' };
const ACCEPTANCE = 'def test_acc():\n    assert True\n';
const made: string[] = [];

afterAll(() => made.splice(0).forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** Outside /tmp, so the sandbox's private /tmp is not what hides it. */
function hostDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join('/var/tmp', prefix));
  made.push(dir);
  return dir;
}

/** Every file under `dir` with its content, links as links. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const name = path.relative(dir, full);
    if (entry.isSymbolicLink()) out[name] = `link:${fs.readlinkSync(full)}`;
    else if (entry.isFile()) out[name] = fs.readFileSync(full, 'base64');
    else if (entry.isDirectory()) out[`${name}/`] = '';
  }
  return out;
}

test('from an adopted run the code under test reaches neither its git directory, nor the originals, nor the disk id', async () => {
  const root = hostDir('aca-hosted-escape-');
  const storeDir = path.join(root, 'store.git');
  execFileSync('git', ['init', '--bare', '--quiet', storeDir], {
    env: {
      PATH: process.env.PATH,
      HOME: '/nonexistent',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });
  const store = parseGitStoreLocation(storeDir, '/unused');
  // Host A prepares the run and commits the acceptance test; host B adopts it and runs its tests.
  const a = new HostRuns({
    store,
    home: path.join(root, 'a-home'),
    workspacesRoot: path.join(root, 'a-ws'),
    author: AUTHOR,
  });
  const id = 'adopted-escape';
  const branch = `aca/${id}`;
  const run = await createFreshRunRepository({
    gitDir: a.gitDirFor(id),
    workTree: a.workspaceFor(id),
    branch,
  });
  await pushRunCommit(store, run, branch, run.baseCommit, null);
  const place: RunPlace = {
    workflowId: id,
    branch,
    disk: a.disk(),
    gitDir: run.gitDir,
    commonDir: run.commonDir,
    workTree: run.workTree,
  };
  fs.mkdirSync(path.join(run.workTree, 'tests'));
  fs.writeFileSync(path.join(run.workTree, 'tests', 'test_acc.py'), ACCEPTANCE);
  const commit = (await a.commit(place, run.baseCommit, {
    message: 'aca: tests',
    step: 'tests',
    execution: 'e',
  }))!;

  const bHome = path.join(root, 'b-home');
  const b = new HostRuns({ store, home: bHome, workspacesRoot: path.join(root, 'b-ws'), author: AUTHOR });
  const here = await b.adopt(place, commit);
  const local = { workspace: here.workTree };
  expect(local.workspace).toBe(b.workspaceFor(id));
  const originals = await b.acceptanceOriginals(here, commit, ['tests/test_acc.py']);
  expect(originals.startsWith(bHome)).toBe(true);
  const gitDir = b.gitDirFor(id);
  const targets = {
    gitConfig: path.join(gitDir, 'config'),
    gitHooks: path.join(gitDir, 'hooks'),
    original: path.join(originals, 'tests', 'test_acc.py'),
    diskId: path.join(bHome, 'disk-id'),
  };
  const before = {
    git: snapshot(gitDir),
    originals: snapshot(originals),
    diskId: fs.readFileSync(targets.diskId, 'utf8'),
  };

  fs.writeFileSync(
    path.join(local.workspace, 'test_reach.py'),
    `
import errno, os

TARGETS = ${py(JSON.stringify(targets))}

def attempt(fn):
    try:
        fn()
        return "done"
    except OSError as e:
        return errno.errorcode[e.errno]

def write(p):
    with open(p, "a") as f:
        f.write("planted")

def plant_hook(folder):
    with open(os.path.join(folder, "post-commit"), "w") as f:
        f.write("#!/bin/sh\\ntouch /tmp/pwned\\n")

def test_reach():
    import json
    targets = json.loads(TARGETS)
    tried = {}
    for name, p in targets.items():
        tried[name + " by path"] = attempt(lambda: write(p))
        tried[name + " via /proc/1/root"] = attempt(lambda: write("/proc/1/root" + p))
        tried[name + " via /proc/self/cwd/.."] = attempt(lambda: write("/proc/self/cwd/../.." + p))
    tried["hooks"] = attempt(lambda: plant_hook(targets["gitHooks"]))
    # Out of the mount by ".." from the workspace: the sandbox's own root, not the host folder.
    tried["../../b-home/git"] = attempt(lambda: os.listdir("../../b-home/git"))
    tried["../../b-home/disk-id"] = attempt(lambda: write("../../b-home/disk-id"))
    # The host path of the workspace's mount, as /proc/self/mountinfo shows it.
    for line in open("/proc/self/mountinfo"):
        fields = line.split()
        if fields[4] == "/workspace":
            host = os.path.dirname(fields[3])
            tried["mountinfo " + host] = attempt(lambda: write(os.path.join(host, "..", "b-home", "disk-id")))
            tried["mountinfo listdir"] = attempt(lambda: os.listdir(host))
    # The workspace copy of the acceptance test: its original is mounted over it, read-only.
    tried["acceptance copy"] = attempt(lambda: write("tests/test_acc.py"))
    with open("reach.json", "w") as f:
        json.dump(tried, f)
    reached = {k: v for k, v in tried.items() if v not in ("ENOENT", "EACCES", "EROFS", "EPERM", "ENOTDIR")}
    assert reached == {}, tried
`,
  );
  const report = await runTestSuite({
    workspace: local.workspace,
    language: 'python',
    mode: 'bwrap',
    acceptance: { sourceDir: originals, files: ['tests/test_acc.py'] },
  });
  try {
    expect(report.cases.map((c) => `${c.name} ${c.status} ${c.message ?? ''}`)).toEqual([
      'test_reach.py::test_reach passed ',
      'tests/test_acc.py::test_acc passed ',
    ]);
    const tried = JSON.parse(fs.readFileSync(path.join(local.workspace, 'reach.json'), 'utf8')) as Record<
      string,
      string
    >;
    // The probe found the workspace's host path and tried the folder beside it.
    expect(Object.keys(tried).filter((k) => k.startsWith('mountinfo ')).length).toBeGreaterThan(0);
    expect(snapshot(gitDir)).toEqual(before.git);
    expect(snapshot(originals)).toEqual(before.originals);
    expect(fs.readFileSync(targets.diskId, 'utf8')).toBe(before.diskId);
  } finally {
    await releaseWorkspace(local.workspace);
  }
}, 60_000);
