/**
 * Attacks on a run adopted by another host (HostRuns, host-runs.ts): the work tree and git
 * directory the adopting host makes from the git store, the per-tool-call commit of one path, the
 * recognition of an earlier try's push, the `--tests` originals written from a commit, and the
 * client's reading copy. The code under test has had its hands on the work tree; the worker runs
 * as root. What git-store-attacks.test.ts covers for bringToCommit and commitAll is not repeated.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  pushRunCommit,
  GitStorePushRejectedError,
  parseGitStoreLocation,
  HostRuns,
  gitDirWithCommit,
  createFreshRunRepository,
  type GitStoreLocation,
} from '../../../../src/repo';
import type { RunPlace } from '../../../../src/shared/run-types';
import { tempDirs } from '../../../helpers/temp-dirs';
import { rawGit } from '../../../helpers/raw-git';
import { unblockFifos, within } from '../../../helpers/fifo-guards';

const tempDir = tempDirs('aca-adopt-attack-');
const AUTHOR = { name: 'aca', email: 'aca@localhost' };
/** The workflow execution every step here belongs to. */
const EXECUTION = 'execution-1';

function write(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
}

function bareStore(): GitStoreLocation {
  const dir = path.join(tempDir(), 'store.git');
  rawGit(dir, null, 'init', '--bare', '--quiet');
  return parseGitStoreLocation(dir, '/unused');
}

/** One host: its ACA_HOME (and so its disk id) and workspaces root of its own. */
function worker(store: GitStoreLocation): { host: HostRuns; home: string } {
  const root = tempDir('aca-adopt-attack-host-');
  const home = path.join(root, 'home');
  const host = new HostRuns({
    store,
    home,
    workspacesRoot: path.join(root, 'workspaces'),
    author: AUTHOR,
    pushTimeoutMs: 20_000,
  });
  return { host, home };
}

/**
 * A run prepared on host A (its own paths, base pushed) and a first step there that commits
 * `files`; the place as the workflow records it.
 */
async function runPreparedElsewhere(store: GitStoreLocation, id: string, files: Record<string, string>) {
  const a = worker(store);
  const branch = `aca/${id}`;
  const made = await createFreshRunRepository({
    gitDir: a.host.gitDirFor(id),
    workTree: a.host.workspaceFor(id),
    branch,
  });
  await pushRunCommit(store, made, branch, made.baseCommit, null);
  let place: RecordedPlace = {
    workflowId: id,
    branch,
    disk: a.host.disk(),
    gitDir: made.gitDir,
    commonDir: made.commonDir,
    workTree: made.workTree,
    commit: made.baseCommit,
  };
  write(place.workTree, files);
  const commit = await a.host.commit(place, place.commit, {
    message: 'aca: first step',
    step: 'first',
    execution: EXECUTION,
  });
  place = { ...place, commit: commit! };
  return { a, place, branch };
}

/** Host B adopts the run (host A is gone): the place as the workflow records it from then on. */
async function adoptedBy(b: { host: HostRuns }, place: RecordedPlace): Promise<RecordedPlace> {
  return { ...(await b.host.adopt(place, place.commit)), commit: place.commit };
}

/** A run's place with the commit the workflow last recorded, as its steps are given them. */
type RecordedPlace = RunPlace & { commit: string };

function storeTip(store: GitStoreLocation, branch: string): string {
  return rawGit(store.url, null, 'rev-parse', '--verify', `refs/heads/${branch}`).trim();
}

function filesAt(store: GitStoreLocation, commit: string): string[] {
  return rawGit(store.url, null, 'ls-tree', '-r', '--name-only', commit).split('\n').filter(Boolean);
}

describe('adopting a run', () => {
  test("the adopting host's work tree and git directory are its own, at the recorded commit; what a run of the same id left there is gone", async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'adopt-fresh', {
      '.gitignore': 'build/\n',
      'src/app.py': 'x = 1\n',
    });
    const b = worker(store);
    // A run of the same id that B held before (discarded since): installs, a planted module.
    write(b.host.workspaceFor(place.workflowId), {
      'build/poison.js': 'module.exports = "planted by run 1";\n',
      'src/evil.py': 'evil = True\n',
    });
    const here = await adoptedBy(b, place);
    expect(here.workTree).toBe(b.host.workspaceFor(place.workflowId));
    expect(here.gitDir).toBe(b.host.gitDirFor(place.workflowId));
    expect(here.gitDir.startsWith(path.dirname(place.gitDir))).toBe(false);
    expect(fs.readdirSync(here.workTree).sort()).toEqual(['.gitignore', 'src']);
    expect(fs.readdirSync(path.join(here.workTree, 'src'))).toEqual(['app.py']);
    expect(rawGit(here.gitDir, null, 'rev-parse', `refs/heads/${place.branch}`).trim()).toBe(place.commit);
  });

  test('a step at the recorded commit on a tree the code under test moved (a commit of its own, a rewritten file) starts from the recorded commit', async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'adopt-moved', { 'src/app.py': 'x = 1\n' });
    const b = worker(store);
    const here = await adoptedBy(b, place);
    write(here.workTree, { 'src/app.py': 'x = 666\n' });
    rawGit(here.gitDir, here.workTree, 'add', '-A');
    rawGit(here.gitDir, here.workTree, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-qm', 'moved');
    await b.host.atCommit(here, here.commit);
    expect(fs.readFileSync(path.join(here.workTree, 'src/app.py'), 'utf8')).toBe('x = 1\n');
    expect(rawGit(here.gitDir, null, 'rev-parse', `refs/heads/${place.branch}`).trim()).toBe(place.commit);
  });
});

describe("a tool call's commit of the one path it wrote (paths-only)", () => {
  test("a test run that changed tracked files and planted new ones: only the tool's path reaches the branch", async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'paths-only', {
      'src/app.py': 'x = 1\n',
      'src/other.py': 'y = 2\n',
    });
    const b = worker(store);
    const here = await adoptedBy(b, place);
    const local = { workspace: here.workTree };
    expect(local.workspace.startsWith(path.dirname(b.home))).toBe(true);
    // What the last test run on B left: a tracked file rewritten, a new module, a conftest.
    write(local.workspace, {
      'src/other.py': 'import os; os.system("pwn")\n',
      'src/evil.py': 'evil = True\n',
      'conftest.py': 'raise SystemExit\n',
    });
    // The tree is at the recorded commit's tip: the next call takes it as it is.
    const again = { workspace: await b.host.atCommit(here, here.commit).then((g) => g.workTree) };
    expect(fs.readFileSync(path.join(again.workspace, 'src/evil.py'), 'utf8')).toBe('evil = True\n');
    // The model's edit_file of src/app.py, committed on its own.
    write(again.workspace, { 'src/app.py': 'x = 2\n' });
    const commit = await b.host.commit(here, here.commit, {
      execution: EXECUTION,
      message: 'aca: coder: edit_file src/app.py',
      step: 'paths-only/call-1',
      paths: ['src/app.py'],
    });
    expect(commit).not.toBeNull();
    expect(storeTip(store, place.branch)).toBe(commit);
    expect(filesAt(store, commit!)).toEqual(['src/app.py', 'src/other.py']);
    expect(rawGit(store.url, null, 'show', `${commit}:src/other.py`)).toBe('y = 2\n');
    expect(rawGit(store.url, null, 'show', `${commit}:src/app.py`)).toBe('x = 2\n');
  });

  test.each([
    ['a file the repository ignores', { '.gitignore': 'build/\n.env\n' }, 'build/out.js'],
    ['a file the repository ignores, at the top', { '.gitignore': 'build/\n.env\n' }, '.env'],
  ])(
    'the model writes %s: the call is done, nothing to commit, and the run goes on (no retries into a failed run)',
    async (_what, files, target) => {
      const store = bareStore();
      const { place } = await runPreparedElsewhere(store, `ignored-${target.replace(/\W/g, '')}`, {
        ...files,
        'src/app.py': 'x = 1\n',
      });
      const b = worker(store);
      const here = await adoptedBy(b, place);
      const local = { workspace: here.workTree };
      write(local.workspace, { [target]: 'SECRET=1\n' });
      const commit = await b.host.commit(here, here.commit, {
        execution: EXECUTION,
        message: `aca: coder: create_file ${target}`,
        step: 'ignored/call-1',
        paths: [target],
      });
      expect(commit).toBeNull();
      expect(storeTip(store, place.branch)).toBe(place.commit);
    },
  );

  test('a path inside a submodule of the repository (a gitlink): nothing to commit, no failure', async () => {
    const store = bareStore();
    const { place, a } = await runPreparedElsewhere(store, 'gitlink', { 'src/app.py': 'x = 1\n' });
    // The user's repository holds a submodule at lib/ (a gitlink, not checked out).
    const gitDir = place.gitDir;
    rawGit(gitDir, place.workTree, 'update-index', '--add', '--cacheinfo', `160000,${place.commit},lib`);
    const tree = rawGit(gitDir, null, 'write-tree').trim();
    const withLink = rawGit(gitDir, null, 'commit-tree', tree, '-p', place.commit, '-m', 'submodule').trim();
    rawGit(gitDir, null, 'update-ref', `refs/heads/${place.branch}`, withLink);
    await pushRunCommit(store, place, place.branch, withLink, place.commit);
    expect(a.host.disk()).not.toBe('');
    const next: RecordedPlace = { ...place, commit: withLink };
    const b = worker(store);
    const here = await adoptedBy(b, next);
    write(here.workTree, { 'lib/x.py': 'x\n' });
    const commit = await b.host.commit(here, here.commit, {
      execution: EXECUTION,
      message: 'aca: coder: create_file lib/x.py',
      step: 'gitlink/call-1',
      paths: ['lib/x.py'],
    });
    expect(commit).toBeNull();
    expect(storeTip(store, place.branch)).toBe(withLink);
  });

  test("a model's summary with NUL in the commit message: the commit is made (no argument can carry NUL)", async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'nul-message', { 'a.txt': '1\n' });
    const b = worker(store);
    const here = await adoptedBy(b, place);
    const local = { workspace: here.workTree };
    write(local.workspace, { 'a.txt': '2\n' });
    const commit = await b.host.commit(here, here.commit, {
      execution: EXECUTION,
      message: 'aca: attempt 1, coder: done\u0000\nAca-Step: forged',
      step: 'nul-message/commit-1',
    });
    expect(storeTip(store, place.branch)).toBe(commit);
    expect(
      rawGit(store.url, null, 'log', '-1', '--format=%(trailers:key=Aca-Step,valueonly)', commit!).trim(),
    ).toBe('nul-message/commit-1');
  });

  test('delete_file of a file git never tracked (a test run made it): nothing to commit, no failure', async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'untracked-delete', { 'src/app.py': 'x = 1\n' });
    const b = worker(store);
    const here = await adoptedBy(b, place);
    const local = { workspace: here.workTree };
    write(local.workspace, { 'made-by-test.txt': 'x\n' });
    fs.rmSync(path.join(local.workspace, 'made-by-test.txt'));
    const commit = await b.host.commit(here, here.commit, {
      execution: EXECUTION,
      message: 'aca: coder: delete_file made-by-test.txt',
      step: 'untracked-delete/call-1',
      paths: ['made-by-test.txt'],
    });
    expect(commit).toBeNull();
  });
});

describe('what a test run leaves in an adopted work tree, which the next step on the same host takes as it is', () => {
  test('a `.git` file naming a repository with hooks and fsmonitor, a nested repository linked to it, a link out, FIFOs, a required filter: the next commits run, follow and hang on nothing', async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'planted', {
      'src/app.py': 'x = 1\n',
      '.gitignore': 'build/\n',
    });
    const b = worker(store);
    const here = await adoptedBy(b, place);
    const local = { workspace: here.workTree };
    const work = local.workspace;
    const outside = tempDir('aca-adopt-attack-outside-');
    const ran = path.join(outside, 'ran');
    const hook = `#!/bin/sh\necho "$0" >> ${ran}\n`;
    const evilGit = path.join(outside, 'evil.git');
    rawGit(evilGit, null, 'init', '--quiet', '--bare');
    const hooks = [
      'pre-commit',
      'post-commit',
      'commit-msg',
      'post-index-change',
      'reference-transaction',
      'pre-push',
    ];
    for (const name of hooks) {
      write(evilGit, { [`hooks/${name}`]: hook });
      fs.chmodSync(path.join(evilGit, 'hooks', name), 0o755);
    }
    rawGit(evilGit, null, 'config', 'core.fsmonitor', path.join(evilGit, 'hooks', 'pre-commit'));
    rawGit(evilGit, null, 'config', 'filter.evil.clean', path.join(evilGit, 'hooks', 'pre-commit'));
    rawGit(evilGit, null, 'config', 'filter.evil.required', 'true');
    try {
      // A `.git` file at the top naming the code's repository, and a nested one linked to it.
      fs.writeFileSync(path.join(work, '.git'), `gitdir: ${evilGit}\n`);
      fs.mkdirSync(path.join(work, 'vendor'));
      fs.symlinkSync(evilGit, path.join(work, 'vendor', '.git'));
      write(work, { 'vendor/lib.py': 'v = 1\n', '.gitattributes': '* filter=evil\n' });
      // A link out to a root-only file, at a new name.
      const secret = path.join(outside, 'secret.txt');
      fs.writeFileSync(secret, 'ROOT-ONLY-SECRET\n', { mode: 0o600 });
      fs.symlinkSync(secret, path.join(work, 'escape'));
      execFileSync('mkfifo', [path.join(work, 'src', '.gitignore')]);
      execFileSync('mkfifo', [path.join(work, 'build-fifo')]);
      // The branch is at the recorded commit: the tree is taken as it is.
      const again = { ...local, git: await b.host.atCommit(here, here.commit) };
      write(work, { 'src/app.py': 'x = 2\n' });
      const one = await within(
        20_000,
        'paths-only commit',
        b.host.commit(here, here.commit, {
          execution: EXECUTION,
          message: 'aca: edit',
          step: 'planted/call-1',
          paths: ['src/app.py'],
        }),
      );
      expect(filesAt(store, one!)).toEqual(['.gitignore', 'src/app.py']);
      const next: RecordedPlace = { ...here, commit: one! };
      const all = await within(
        20_000,
        'whole-tree commit',
        b.host.commit(next, next.commit, {
          message: 'aca: coder',
          step: 'planted/commit-1',
          execution: EXECUTION,
        }),
      );
      expect(storeTip(store, place.branch)).toBe(all);
      // The attributes file is the code's to commit; the nested repository, the `.git` file and the FIFOs are not.
      expect(filesAt(store, all!)).toEqual(['.gitattributes', '.gitignore', 'escape', 'src/app.py']);
      // The link is recorded as a link: what it points at never reaches the store.
      expect(rawGit(store.url, null, 'ls-tree', all!, 'escape')).toMatch(/^120000 blob /);
      expect(rawGit(store.url, null, 'show', `${all}:escape`)).toBe(secret);
      expect(fs.existsSync(ran)).toBe(false);
      expect(rawGit(evilGit, null, 'for-each-ref')).toBe('');
      // The run's own git directory on B is the one B made, untouched by the planted `.git`.
      expect(again.git.gitDir).toBe(b.host.gitDirFor(place.workflowId));
    } finally {
      unblockFifos(work);
    }
  }, 60_000);
});

describe('taking the store tip for an earlier try of the same step', () => {
  /** Pushes, as "someone else", a commit on `parents` with `message` to the store's branch. */
  function pushForeign(store: GitStoreLocation, branch: string, parents: string[], message: string): string {
    const tree = rawGit(store.url, null, 'rev-parse', `${parents[0]}^{tree}`).trim();
    const commit = rawGit(
      store.url,
      null,
      'commit-tree',
      tree,
      ...parents.flatMap((p) => ['-p', p]),
      '-m',
      message,
    ).trim();
    rawGit(store.url, null, 'update-ref', `refs/heads/${branch}`, commit);
    return commit;
  }

  test.each([
    ["the step's trailer on another parent (the commit before the recorded one)", 'grandparent'],
    ["the step's trailer on a merge whose first parent is the recorded commit", 'merge'],
    ['the recorded parent, the step named in the body but not as the trailer', 'body'],
    ["the recorded parent, another step's trailer", 'other-step'],
  ])('a tip with %s is refused, not adopted', async (_what, kind) => {
    const store = bareStore();
    const { place, a } = await runPreparedElsewhere(store, `adopt-${kind}`, { 'a.txt': '1\n' });
    const step = `adopt-${kind}/call-7`;
    // B holds the run at the recorded commit; meanwhile someone else moves the store's branch.
    expect(a.host.disk()).not.toBe('');
    const b = worker(store);
    const here = await adoptedBy(b, place);
    const local = { workspace: here.workTree };
    const grand = rawGit(store.url, null, 'rev-parse', `${place.commit}^`).trim();
    const foreign =
      kind === 'grandparent'
        ? pushForeign(store, place.branch, [grand], `forged\n\nAca-Step: ${step}`)
        : kind === 'merge'
          ? pushForeign(store, place.branch, [place.commit, grand], `forged\n\nAca-Step: ${step}`)
          : kind === 'body'
            ? pushForeign(
                store,
                place.branch,
                [place.commit],
                `forged\nAca-Step: ${step}\n\nSigned-off-by: x`,
              )
            : pushForeign(store, place.branch, [place.commit], 'forged\n\nAca-Step: adopt/other-step');
    write(local.workspace, { 'a.txt': '2\n' });
    await expect(
      b.host.commit(here, here.commit, {
        message: 'aca: step',
        step,
        execution: EXECUTION,
        paths: ['a.txt'],
      }),
    ).rejects.toBeInstanceOf(GitStorePushRejectedError);
    expect(storeTip(store, place.branch)).toBe(foreign);
  });

  test("control: the same step's own earlier push on the recorded commit is adopted", async () => {
    const store = bareStore();
    const { place, a } = await runPreparedElsewhere(store, 'adopt-own', { 'a.txt': '1\n' });
    const step = 'adopt-own/call-7';
    const own = pushForeign(
      store,
      place.branch,
      [place.commit],
      `aca: step\n\nAca-Step: ${step}\nAca-Execution: ${EXECUTION}`,
    );
    expect(a.host.disk()).not.toBe('');
    const b = worker(store);
    const here = await adoptedBy(b, place);
    write(here.workTree, { 'a.txt': '2\n' });
    expect(
      await b.host.commit(here, here.commit, {
        message: 'aca: step',
        step,
        execution: EXECUTION,
        paths: ['a.txt'],
      }),
    ).toBe(own);
  });
});

describe('the `--tests` originals a host that adopted the run writes from a commit', () => {
  async function withAcceptance(id: string) {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, id, {
      'tests/test_acc.py': 'def test_acc():\n    assert True\n',
      'solution.py': 'x = 1\n',
    });
    const b = worker(store);
    const here = await adoptedBy(b, place);
    return { store, place: here, b, local: { workspace: here.workTree }, home: b.home };
  }

  test.each([['../work/planted'], ['tests/../../work/planted'], ['/etc/aca-planted'], ['']])(
    'a protected path %j is refused: nothing is written through a link the code planted in the work tree',
    async (file) => {
      const { place, b, local } = await withAcceptance(`acc-dots-${Buffer.from(file).toString('hex')}`);
      const victimDir = tempDir('aca-adopt-attack-victim-');
      const victim = path.join(victimDir, 'victim');
      fs.writeFileSync(victim, 'host file\n');
      // The code under test plants a link in the copy, where `..` out of the originals' folder lands.
      fs.symlinkSync(victim, path.join(local.workspace, 'planted'));
      await expect(b.host.acceptanceOriginals(place, place.commit, [file])).rejects.toThrow(
        /is not a path inside the --tests folder/,
      );
      expect(fs.readFileSync(victim, 'utf8')).toBe('host file\n');
      expect(fs.lstatSync(path.join(local.workspace, 'planted')).isSymbolicLink()).toBe(true);
    },
  );

  test('two workers of one ACA_HOME writing the same originals at once both get the whole folder', async () => {
    const { store, place, b, home } = await withAcceptance('acc-race');
    // A second worker process on the same host (and, in containers, maybe the same pid).
    const twin = new HostRuns({ store, home, workspacesRoot: path.join(home, 'unused'), author: AUTHOR });
    const files = ['tests/test_acc.py'];
    const [one, two] = await Promise.all([
      b.host.acceptanceOriginals(place, place.commit, files),
      twin.acceptanceOriginals(place, place.commit, files),
    ]);
    expect(one).toBe(two);
    expect(fs.readdirSync(path.dirname(one)).filter((n) => n.includes('.new'))).toEqual([]);
    expect(fs.readFileSync(path.join(one, 'tests/test_acc.py'), 'utf8')).toBe(
      'def test_acc():\n    assert True\n',
    );
  });
});

describe('the disk id', () => {
  test.each([['../../etc'], [''], ['zz not hex'], ['a'.repeat(65)]])(
    'a disk-id file holding %j is refused rather than used',
    (content) => {
      const store = bareStore();
      const { host, home } = worker(store);
      fs.mkdirSync(home, { recursive: true });
      fs.writeFileSync(path.join(home, 'disk-id'), content);
      expect(() => host.disk()).toThrow(/disk id/);
    },
  );

  test('workers sharing an ACA_HOME share its disk id, and so its task queues; another home has its own', () => {
    const store = bareStore();
    const { host, home } = worker(store);
    const twin = new HostRuns({ store, home, workspacesRoot: '/unused', author: AUTHOR });
    expect(twin.queues()).toEqual(host.queues());
    expect(host.queues().host).toBe(`aca-host-${host.disk()}`);
    expect(host.queues().tests).toBe(`aca-tests-${host.disk()}`);
    expect(worker(store).host.disk()).not.toBe(host.disk());
  });
});

describe("the client's copies of a run's commits", () => {
  test('read-runs and `aca apply` fetch objects only: no ref, FETCH_HEAD, config or hook of the store or the repository', async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'client-read', { 'a.txt': '1\n' });
    const outside = tempDir('aca-adopt-attack-outside-');
    const ran = path.join(outside, 'ran');
    const hook = `#!/bin/sh\necho "$0" >> ${ran}\n`;
    // The store's own hooks and config (a store is trusted, but none of it is the client's to run).
    for (const name of ['pre-upload-pack', 'post-upload-pack', 'reference-transaction']) {
      write(store.url, { [`hooks/${name}`]: hook });
      fs.chmodSync(path.join(store.url, 'hooks', name), 0o755);
    }
    rawGit(
      store.url,
      null,
      'config',
      'uploadpack.packObjectsHook',
      path.join(store.url, 'hooks', 'pre-upload-pack'),
    );
    rawGit(store.url, null, 'config', 'core.fsmonitor', path.join(store.url, 'hooks', 'pre-upload-pack'));
    // The user's repository, with hooks of its own that a ref update or a checkout would run.
    const user = path.join(tempDir('aca-adopt-attack-user-'), 'repo');
    fs.mkdirSync(user);
    rawGit(path.join(user, '.git'), user, 'init', '--quiet', '--initial-branch=main');
    write(user, { 'README.md': 'mine\n' });
    rawGit(path.join(user, '.git'), user, 'add', '.');
    rawGit(path.join(user, '.git'), user, 'commit', '--quiet', '-m', 'mine');
    for (const name of ['reference-transaction', 'post-checkout', 'post-merge', 'post-index-change']) {
      write(path.join(user, '.git'), { [`hooks/${name}`]: hook });
      fs.chmodSync(path.join(user, '.git', 'hooks', name), 0o755);
    }
    const refsBefore = rawGit(path.join(user, '.git'), null, 'for-each-ref');
    const configBefore = fs.readFileSync(path.join(user, '.git', 'config'), 'utf8');
    const home = path.join(tempDir('aca-adopt-attack-client-'), 'home');
    const query = {
      // The run's git directory is on host A, not on this machine.
      place: {
        ...place,
        gitDir: '/nonexistent/git',
        commonDir: '/nonexistent/git',
        workTree: '/nonexistent/work',
      },
      repo: user,
      commit: place.commit,
    };
    const reading = await gitDirWithCommit(store, home, query);
    expect(reading?.commonDir.startsWith(path.join(home, 'read-runs'))).toBe(true);
    const applying = await gitDirWithCommit(store, home, query, 'repository');
    expect(applying?.commonDir).toBe(path.join(user, '.git'));
    expect(rawGit(path.join(user, '.git'), null, 'cat-file', '-t', place.commit).trim()).toBe('commit');
    expect(rawGit(path.join(user, '.git'), null, 'for-each-ref')).toBe(refsBefore);
    expect(fs.readFileSync(path.join(user, '.git', 'config'), 'utf8')).toBe(configBefore);
    expect(fs.existsSync(path.join(user, '.git', 'FETCH_HEAD'))).toBe(false);
    expect(fs.existsSync(path.join(reading!.commonDir, 'FETCH_HEAD'))).toBe(false);
    expect(rawGit(reading!.commonDir, null, 'for-each-ref')).toBe('');
    expect(fs.existsSync(ran)).toBe(false);
  });
});
