/**
 * Attacks on a worker's copy of a run prepared on another host (RunPlaces, run-places.ts): the
 * copy under `$ACA_HOME/hosted/<run>/`, the marker that lets the next step skip the rebuild, the
 * per-tool-call commit of one path, the adoption of an earlier try's push, the `--tests`
 * originals written from a commit, and the client's reading copy. The code under test has had
 * its hands on the copy (everything in `work/`); the worker runs as root. What
 * git-store-attacks.test.ts covers for bringToCommit and commitAll is not repeated here.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deleteStoreBranch, pushRunCommit } from '../../src/repo/git-store';
import { GitStorePushRejectedError } from '../../src/repo/git-store-errors';
import { parseGitStoreLocation, type GitStoreLocation } from '../../src/repo/git-store-location';
import { gitDirWithCommit } from '../../src/repo/run-commits';
import { RunPlaces, runFolderName, UNUSED_COPY_MS } from '../../src/repo/run-places';
import { createFreshRunRepository } from '../../src/repo/run-repository';
import type { RunPlace } from '../../src/shared/run-types';
import { tempDirs } from '../helpers/temp-dirs';
import { rawGit } from '../helpers/raw-git';
import { unblockFifos, within } from '../helpers/fifo-guards';

const tempDir = tempDirs('aca-places-attack-');
const AUTHOR = { name: 'aca', email: 'aca@localhost' };

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

/** One worker: its ACA_HOME (and so its disk id) of its own. */
function worker(store: GitStoreLocation): { places: RunPlaces; home: string } {
  const home = path.join(tempDir('aca-places-attack-host-'), 'home');
  return { places: new RunPlaces({ store, home, author: AUTHOR, pushTimeoutMs: 20_000 }), home };
}

/**
 * A run prepared on host A (its own paths, base pushed) and a first step there that commits
 * `files`; the place as the workflow hands it to the next step, which runs on host B.
 */
async function runPreparedElsewhere(store: GitStoreLocation, id: string, files: Record<string, string>) {
  const a = worker(store);
  const root = path.dirname(a.home);
  const branch = `aca/${id}`;
  const made = await createFreshRunRepository({
    gitDir: path.join(a.home, 'git', `${id}.git`),
    workTree: path.join(root, 'workspaces', id),
    branch,
  });
  await pushRunCommit(store, made.git, branch, made.baseCommit, null);
  let place: RunPlace = {
    workflowId: id,
    branch,
    commit: made.baseCommit,
    git: made.git,
    disk: a.places.disk(),
  };
  const local = await a.places.open(place);
  write(local.workspace, files);
  const commit = await a.places.commit(place, local, { message: 'aca: first step', step: `${id}/first` });
  place = { ...place, commit: commit! };
  return { a, place, branch };
}

function storeTip(store: GitStoreLocation, branch: string): string {
  return rawGit(store.url, null, 'rev-parse', '--verify', `refs/heads/${branch}`).trim();
}

function filesAt(store: GitStoreLocation, commit: string): string[] {
  return rawGit(store.url, null, 'ls-tree', '-r', '--name-only', commit).split('\n').filter(Boolean);
}

describe("a tool call's commit of the one path it wrote (paths-only)", () => {
  test("a test run that changed tracked files and planted new ones: only the tool's path reaches the branch", async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'paths-only', {
      'src/app.py': 'x = 1\n',
      'src/other.py': 'y = 2\n',
    });
    const b = worker(store);
    const local = await b.places.open(place);
    expect(local.workspace.startsWith(path.join(b.home, 'hosted'))).toBe(true);
    // What the last test run on B left: a tracked file rewritten, a new module, a conftest.
    write(local.workspace, {
      'src/other.py': 'import os; os.system("pwn")\n',
      'src/evil.py': 'evil = True\n',
      'conftest.py': 'raise SystemExit\n',
    });
    // The marker still says B left the copy at the recorded commit: no rebuild.
    const again = await b.places.open(place);
    expect(again.rebuilt).toBe(false);
    // The model's edit_file of src/app.py, committed on its own.
    write(again.workspace, { 'src/app.py': 'x = 2\n' });
    const commit = await b.places.commit(place, again, {
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
      const local = await b.places.open(place);
      write(local.workspace, { [target]: 'SECRET=1\n' });
      const commit = await b.places.commit(place, local, {
        message: `aca: coder: create_file ${target}`,
        step: 'ignored/call-1',
        paths: [target],
      });
      expect(commit).toBeNull();
      expect(storeTip(store, place.branch)).toBe(place.commit);
      // The copy counts as at the recorded commit again: the next step does not rebuild it.
      expect((await b.places.open(place)).rebuilt).toBe(false);
    },
  );

  test('a path inside a submodule of the repository (a gitlink): nothing to commit, no failure', async () => {
    const store = bareStore();
    const { place, a } = await runPreparedElsewhere(store, 'gitlink', { 'src/app.py': 'x = 1\n' });
    // The user's repository holds a submodule at lib/ (a gitlink, not checked out).
    const gitDir = place.git.gitDir;
    rawGit(gitDir, place.git.workTree, 'update-index', '--add', '--cacheinfo', `160000,${place.commit},lib`);
    const tree = rawGit(gitDir, null, 'write-tree').trim();
    const withLink = rawGit(gitDir, null, 'commit-tree', tree, '-p', place.commit, '-m', 'submodule').trim();
    rawGit(gitDir, null, 'update-ref', `refs/heads/${place.branch}`, withLink);
    await pushRunCommit(store, place.git, place.branch, withLink, place.commit);
    a.places.unmark(place);
    const next: RunPlace = { ...place, commit: withLink };
    const b = worker(store);
    const local = await b.places.open(next);
    write(local.workspace, { 'lib/x.py': 'x\n' });
    const commit = await b.places.commit(next, local, {
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
    const local = await b.places.open(place);
    write(local.workspace, { 'a.txt': '2\n' });
    const commit = await b.places.commit(place, local, {
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
    const local = await b.places.open(place);
    write(local.workspace, { 'made-by-test.txt': 'x\n' });
    fs.rmSync(path.join(local.workspace, 'made-by-test.txt'));
    const commit = await b.places.commit(place, local, {
      message: 'aca: coder: delete_file made-by-test.txt',
      step: 'untracked-delete/call-1',
      paths: ['made-by-test.txt'],
    });
    expect(commit).toBeNull();
  });
});

describe('what a test run leaves in the copy, which the next step on the same worker takes as it is', () => {
  test('a `.git` file naming a repository with hooks and fsmonitor, a nested repository linked to it, a link out, FIFOs, a required filter: the next commits run, follow and hang on nothing', async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'planted', {
      'src/app.py': 'x = 1\n',
      '.gitignore': 'build/\n',
    });
    const b = worker(store);
    const local = await b.places.open(place);
    const work = local.workspace;
    const outside = tempDir('aca-places-attack-outside-');
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
      // The marker still matches: the copy is taken as it is.
      const again = await b.places.open(place);
      expect(again.rebuilt).toBe(false);
      write(work, { 'src/app.py': 'x = 2\n' });
      const one = await within(
        20_000,
        'paths-only commit',
        b.places.commit(place, again, {
          message: 'aca: edit',
          step: 'planted/call-1',
          paths: ['src/app.py'],
        }),
      );
      expect(filesAt(store, one!)).toEqual(['.gitignore', 'src/app.py']);
      const next: RunPlace = { ...place, commit: one! };
      const all = await within(
        20_000,
        'whole-tree commit',
        b.places.commit(next, await b.places.open(next), { message: 'aca: coder', step: 'planted/commit-1' }),
      );
      expect(storeTip(store, place.branch)).toBe(all);
      // The attributes file is the code's to commit; the nested repository, the `.git` file and the FIFOs are not.
      expect(filesAt(store, all!)).toEqual(['.gitattributes', '.gitignore', 'escape', 'src/app.py']);
      // The link is recorded as a link: what it points at never reaches the store.
      expect(rawGit(store.url, null, 'ls-tree', all!, 'escape')).toMatch(/^120000 blob /);
      expect(rawGit(store.url, null, 'show', `${all}:escape`)).toBe(secret);
      expect(fs.existsSync(ran)).toBe(false);
      expect(rawGit(evilGit, null, 'for-each-ref')).toBe('');
      // The run's own git directory on B is the hosted one, untouched by the planted `.git`.
      expect(again.git.gitDir).toBe(path.join(path.dirname(work), 'git'));
    } finally {
      unblockFifos(work);
    }
  }, 60_000);
});

describe('a run id used again (`aca discard`, then a run with the same --id)', () => {
  /**
   * Run 1 on host B: a test run plants files the repository ignores (where a setup command's
   * installs live) and the setup command is marked as run there. Then the run is discarded and a
   * run with the same id starts, with a history of its own.
   */
  async function reusedId(id: string) {
    const store = bareStore();
    const first = await runPreparedElsewhere(store, id, {
      '.gitignore': 'build/\n',
      'src/app.py': 'x = 1\n',
    });
    const b = worker(store);
    const local = await b.places.open(first.place);
    b.places.markSetUp(first.place);
    write(local.workspace, {
      'build/installed.js': 'module.exports = "installed by the setup command";\n',
      'build/poison.js': 'module.exports = "planted by run 1";\n',
    });
    write(local.workspace, { 'src/app.py': 'x = 2\n' });
    await b.places.commit(first.place, local, {
      message: 'aca: edit',
      step: `${id}/call-1`,
      paths: ['src/app.py'],
    });
    await deleteStoreBranch(store, first.branch);
    // The same repository again: the same ignore rules.
    const second = await runPreparedElsewhere(store, id, {
      '.gitignore': 'build/\n',
      'README.md': 'run 2\n',
    });
    return { store, b, first, second };
  }

  test("host B's copy of run 1 (ignored files, setup mark) is not run 2's: it starts afresh", async () => {
    const { b, second } = await reusedId('reused');
    const local = await b.places.open(second.place);
    expect(local.rebuilt).toBe(true);
    expect(fs.readdirSync(local.workspace).sort()).toEqual(['.gitignore', 'README.md']);
    expect(b.places.isSetUp(second.place)).toBe(false);
  });

  test("run 2 of the same repository starting where run 1 did (--repo at the same HEAD): B's copy of run 1 is not taken", async () => {
    const store = bareStore();
    const id = 'reused-start';
    const first = await runPreparedElsewhere(store, id, {
      '.gitignore': 'build/\n',
      'src/app.py': 'x = 1\n',
    });
    const start = first.place.commit;
    const b = worker(store);
    const local = await b.places.open(first.place);
    b.places.markSetUp(first.place);
    write(local.workspace, { 'build/poison.js': 'planted by run 1\n', 'src/app.py': 'x = 2\n' });
    await b.places.commit(first.place, local, {
      message: 'aca: edit',
      step: `${id}/call-1`,
      paths: ['src/app.py'],
    });
    await deleteStoreBranch(store, first.branch);
    // Run 2 starts at the same commit: its branch is pushed anew from there.
    await pushRunCommit(store, first.place.git, first.branch, start, null);
    const again = await b.places.open({ ...first.place, commit: start });
    expect(fs.readdirSync(again.workspace).sort()).toEqual(['.gitignore', 'src']);
    expect(b.places.isSetUp(first.place)).toBe(false);
  });

  test('a copy whose marker is gone (no commit known for it) is not trusted either: it starts afresh', async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'no-marker', {
      '.gitignore': 'build/\n',
      'a.txt': '1\n',
    });
    const b = worker(store);
    const local = await b.places.open(place);
    write(local.workspace, { 'build/poison.js': 'planted\n' });
    fs.rmSync(path.join(b.home, 'run-marks'), { recursive: true });
    const again = await b.places.open(place);
    expect(fs.readdirSync(again.workspace).sort()).toEqual(['.gitignore', 'a.txt']);
  });

  test("control: a retried step, whose first try pushed and marked the next commit on B, keeps B's installs and adopts its push", async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'retried', {
      '.gitignore': 'build/\n',
      'a.txt': '1\n',
    });
    const b = worker(store);
    const local = await b.places.open(place);
    b.places.markSetUp(place);
    write(local.workspace, { 'build/installed.js': 'installed\n', 'a.txt': '2\n' });
    const request = { message: 'aca: edit a.txt', step: 'retried/call-3', paths: ['a.txt'] };
    const pushed = await b.places.commit(place, local, request);
    // The activity's result never reached the workflow: the step runs again from the recorded commit.
    const again = await b.places.open(place);
    expect(again.rebuilt).toBe(true);
    expect(fs.readFileSync(path.join(again.workspace, 'a.txt'), 'utf8')).toBe('1\n');
    expect(fs.readFileSync(path.join(again.workspace, 'build/installed.js'), 'utf8')).toBe('installed\n');
    expect(b.places.isSetUp(place)).toBe(true);
    write(again.workspace, { 'a.txt': '2\n' });
    expect(await b.places.commit(place, again, request)).toBe(pushed);
  });

  test('control: within one run the ignored files and the setup mark stay across rebuilds to later commits', async () => {
    const store = bareStore();
    const { place, a } = await runPreparedElsewhere(store, 'kept', {
      '.gitignore': 'build/\n',
      'a.txt': '1\n',
    });
    const b = worker(store);
    const local = await b.places.open(place);
    b.places.markSetUp(place);
    write(local.workspace, { 'build/installed.js': 'installed\n' });
    // The next steps run on host A; then one on B again, at a later commit.
    a.places.unmark(place);
    const onA = await a.places.open(place);
    write(onA.workspace, { 'a.txt': '2\n' });
    const later = await a.places.commit(place, onA, { message: 'aca: a', step: 'kept/a' });
    // A step on B that died half-way left the copy unmarked, at the earlier commit.
    b.places.unmark(place);
    const again = await b.places.open({ ...place, commit: later! });
    expect(again.rebuilt).toBe(true);
    expect(fs.readFileSync(path.join(again.workspace, 'a.txt'), 'utf8')).toBe('2\n');
    expect(fs.readFileSync(path.join(again.workspace, 'build/installed.js'), 'utf8')).toBe('installed\n');
    expect(b.places.isSetUp(place)).toBe(true);
  });
});

describe('pruning copies unused for days', () => {
  // A file rm cannot remove: as root, an immutable one stands in for a folder a test made
  // unwritable on a worker without root (which a root worker would remove anyway).
  const rootOnly = process.getuid?.() === 0 ? test : test.skip;
  rootOnly(
    "a copy that cannot be removed fails no other run's step, and the others are still pruned",
    async () => {
      const store = bareStore();
      const stuck = await runPreparedElsewhere(store, 'prune-stuck', { 'a.txt': '1\n' });
      const stale = await runPreparedElsewhere(store, 'prune-stale', { 'a.txt': '1\n' });
      const b = worker(store);
      const stuckCopy = await b.places.open(stuck.place);
      await b.places.open(stale.place);
      const past = new Date(Date.now() - UNUSED_COPY_MS - 60_000);
      for (const id of ['prune-stuck', 'prune-stale']) {
        fs.utimesSync(path.join(b.home, 'hosted', runFolderName(id)), past, past);
        fs.utimesSync(path.join(b.home, 'run-marks', `${runFolderName(id)}.json`), past, past);
      }
      const pinned = path.join(stuckCopy.workspace, 'pinned.txt');
      fs.writeFileSync(pinned, 'x');
      execFileSync('chattr', ['+i', pinned]);
      try {
        const other = await runPreparedElsewhere(store, 'prune-other', { 'a.txt': '1\n' });
        // The worker restarted since (it prunes at most once an hour): its first rebuild prunes.
        const restarted = new RunPlaces({ store, home: b.home, author: AUTHOR });
        const local = await restarted.open(other.place);
        expect(fs.readFileSync(path.join(local.workspace, 'a.txt'), 'utf8')).toBe('1\n');
        expect(fs.existsSync(path.join(b.home, 'hosted', runFolderName('prune-stale')))).toBe(false);
        expect(fs.existsSync(pinned)).toBe(true);
      } finally {
        execFileSync('chattr', ['-i', pinned]);
      }
    },
  );
});

describe('adopting the store tip as an earlier try of the same step', () => {
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
    // B holds the copy at the recorded commit; meanwhile someone else moves the store's branch.
    a.places.unmark(place);
    const b = worker(store);
    const local = await b.places.open(place);
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
      b.places.commit(place, local, { message: 'aca: step', step, paths: ['a.txt'] }),
    ).rejects.toBeInstanceOf(GitStorePushRejectedError);
    expect(storeTip(store, place.branch)).toBe(foreign);
    // The copy is not taken for being at any commit: the next step rebuilds it.
    const marker = path.join(b.home, 'run-marks', `${runFolderName(place.workflowId)}.json`);
    expect(JSON.parse(fs.readFileSync(marker, 'utf8'))).toMatchObject({ commit: null, last: place.commit });
  });

  test("control: the same step's own earlier push on the recorded commit is adopted", async () => {
    const store = bareStore();
    const { place, a } = await runPreparedElsewhere(store, 'adopt-own', { 'a.txt': '1\n' });
    const step = 'adopt-own/call-7';
    const own = pushForeign(store, place.branch, [place.commit], `aca: step\n\nAca-Step: ${step}`);
    a.places.unmark(place);
    const b = worker(store);
    const local = await b.places.open(place);
    write(local.workspace, { 'a.txt': '2\n' });
    expect(await b.places.commit(place, local, { message: 'aca: step', step, paths: ['a.txt'] })).toBe(own);
  });
});

describe("the `--tests` originals a worker off the run's disk writes from a commit", () => {
  async function withAcceptance(id: string) {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, id, {
      'tests/test_acc.py': 'def test_acc():\n    assert True\n',
      'solution.py': 'x = 1\n',
    });
    const b = worker(store);
    const local = await b.places.open(place);
    return { store, place, b, local };
  }

  test("a folder at the `--tests` path on this host (not the user's) is not taken for the originals", async () => {
    const { place, b, local } = await withAcceptance('acc-other-folder');
    // The path the user gave on host A, which on host B holds something else.
    const testsDir = tempDir('aca-places-attack-tests-');
    write(testsDir, { 'tests/test_acc.py': "def test_acc():\n    pass  # not the user's\n" });
    const folder = await b.places.acceptanceOriginals(place, local, testsDir, place.commit, [
      'tests/test_acc.py',
    ]);
    expect(folder).not.toBe(testsDir);
    expect(fs.readFileSync(path.join(folder, 'tests/test_acc.py'), 'utf8')).toBe(
      'def test_acc():\n    assert True\n',
    );
  });

  test.each([['../work/planted'], ['tests/../../work/planted'], ['/etc/aca-planted'], ['']])(
    'a protected path %j is refused: nothing is written through a link the code planted in the work tree',
    async (file) => {
      const { place, b, local } = await withAcceptance(`acc-dots-${Buffer.from(file).toString('hex')}`);
      const victimDir = tempDir('aca-places-attack-victim-');
      const victim = path.join(victimDir, 'victim');
      fs.writeFileSync(victim, 'host file\n');
      // The code under test plants a link in the copy, where `..` out of the originals' folder lands.
      fs.symlinkSync(victim, path.join(local.workspace, 'planted'));
      await expect(
        b.places.acceptanceOriginals(place, local, '/nonexistent/tests', place.commit, [file]),
      ).rejects.toThrow(/is not a path inside the --tests folder/);
      expect(fs.readFileSync(victim, 'utf8')).toBe('host file\n');
      expect(fs.lstatSync(path.join(local.workspace, 'planted')).isSymbolicLink()).toBe(true);
    },
  );

  test('two workers of one ACA_HOME writing the same originals at once both get the whole folder', async () => {
    const { store, place, b, local } = await withAcceptance('acc-race');
    // A second worker process on the same host (and, in containers, maybe the same pid).
    const twin = new RunPlaces({ store, home: b.home, author: AUTHOR });
    const files = ['tests/test_acc.py'];
    const [one, two] = await Promise.all([
      b.places.acceptanceOriginals(place, local, '/nonexistent/tests', place.commit, files),
      twin.acceptanceOriginals(place, local, '/nonexistent/tests', place.commit, files),
    ]);
    expect(one).toBe(two);
    expect(fs.readdirSync(path.dirname(one)).filter((n) => n.includes('.new'))).toEqual([]);
    expect(fs.readFileSync(path.join(one, 'tests/test_acc.py'), 'utf8')).toBe(
      'def test_acc():\n    assert True\n',
    );
  });
});

describe('folder names of runs', () => {
  test('workflow ids that differ only in characters a folder name cannot hold get folders of their own', () => {
    const ids = [
      'a/b',
      'a_b',
      'a:b',
      'a b',
      'a\nb',
      'a%2Fb',
      '.a/b',
      '_a/b',
      `${'x'.repeat(80)}1`,
      `${'x'.repeat(80)}2`,
    ];
    const names = ids.map(runFolderName);
    expect(new Set(names).size).toBe(ids.length);
    for (const name of names) {
      expect(name).toMatch(/^[A-Za-z0-9._-]+$/);
      expect(name.startsWith('.')).toBe(false);
      expect(name.length).toBeLessThanOrEqual(100);
    }
  });

  test("two runs whose ids differ in odd characters: one run's copy, marker and setup mark are never the other's", async () => {
    const store = bareStore();
    const first = await runPreparedElsewhere(store, 'odd/id', { 'a.txt': 'first\n' });
    const second = await runPreparedElsewhere(store, 'odd_id', { 'a.txt': 'second\n' });
    const b = worker(store);
    const one = await b.places.open(first.place);
    b.places.markSetUp(first.place);
    const two = await b.places.open(second.place);
    expect(one.workspace).not.toBe(two.workspace);
    expect(fs.readFileSync(path.join(one.workspace, 'a.txt'), 'utf8')).toBe('first\n');
    expect(fs.readFileSync(path.join(two.workspace, 'a.txt'), 'utf8')).toBe('second\n');
    expect(b.places.isSetUp(second.place)).toBe(false);
    expect((await b.places.open(first.place)).rebuilt).toBe(false);
  });
});

describe('the disk id', () => {
  test.each([['../../etc'], [''], ['zz not hex'], ['a'.repeat(65)]])(
    'a disk-id file holding %j is refused rather than used',
    (content) => {
      const store = bareStore();
      const { places, home } = worker(store);
      fs.mkdirSync(home, { recursive: true });
      fs.writeFileSync(path.join(home, 'disk-id'), content);
      expect(() => places.disk()).toThrow(/disk id/);
    },
  );
});

describe("the client's copies of a run's commits", () => {
  test('read-runs and `aca apply` fetch objects only: no ref, FETCH_HEAD, config or hook of the store or the repository', async () => {
    const store = bareStore();
    const { place } = await runPreparedElsewhere(store, 'client-read', { 'a.txt': '1\n' });
    const outside = tempDir('aca-places-attack-outside-');
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
    const user = path.join(tempDir('aca-places-attack-user-'), 'repo');
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
    const home = path.join(tempDir('aca-places-attack-client-'), 'home');
    const query = {
      workflowId: place.workflowId,
      branch: place.branch,
      // The run's git directory is on host A, not on this machine.
      git: { gitDir: '/nonexistent/git', commonDir: '/nonexistent/git', workTree: '/nonexistent/work' },
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
