/**
 * RunPlaces with real git: two "hosts" are two ACA_HOMEs in temporary folders sharing a bare store
 * at a path. A run prepared on host A is worked on by host B in a copy of B's own, brought to the
 * commit the workflow recorded.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pushRunCommit } from '../../src/repo/git-store';
import { GitStorePushRejectedError } from '../../src/repo/git-store-errors';
import { parseGitStoreLocation, type GitStoreLocation } from '../../src/repo/git-store-location';
import { RunPlaces, runFolderName, UNUSED_COPY_MS } from '../../src/repo/run-places';
import { createFreshRunRepository } from '../../src/repo/run-repository';
import type { RunPlace } from '../../src/shared/run-types';
import { tempDirs } from '../helpers/temp-dirs';

const tempDir = tempDirs('aca-places-test-');
const AUTHOR = { name: 'aca', email: 'aca@localhost' };

const show = (gitDir: string, spec: string): string =>
  execFileSync('git', ['--git-dir', gitDir, 'show', spec], { encoding: 'utf8' });

function makeStore(): GitStoreLocation {
  const store = path.join(tempDir(), 'store.git');
  execFileSync('git', ['init', '--quiet', '--bare', store]);
  return parseGitStoreLocation(store, '/nonexistent-home');
}

/** A run prepared on `host` (a fresh repository, its base pushed), as the workflow names it. */
async function prepareOn(
  host: RunPlaces,
  home: string,
  store: GitStoreLocation,
  id: string,
): Promise<RunPlace> {
  const branch = `aca/${id}`;
  const { git, baseCommit } = await createFreshRunRepository({
    gitDir: path.join(home, 'git', `${id}.git`),
    workTree: path.join(home, 'workspaces', id),
    branch,
  });
  await pushRunCommit(store, git, branch, baseCommit, null);
  const place = { workflowId: id, branch, commit: baseCommit, git, disk: host.disk() };
  host.mark(place, baseCommit);
  return place;
}

function twoHosts(store: GitStoreLocation) {
  const homeA = tempDir();
  const homeB = tempDir();
  return {
    homeA,
    homeB,
    a: new RunPlaces({ store, home: homeA, author: AUTHOR }),
    b: new RunPlaces({ store, home: homeB, author: AUTHOR }),
  };
}

describe('RunPlaces', () => {
  test('without a store, every worker uses the recorded paths and keeps no marker or copy', async () => {
    const home = tempDir();
    const places = new RunPlaces({ store: null, home, author: AUTHOR });
    const place: RunPlace = {
      workflowId: 'r1',
      branch: 'aca/r1',
      commit: 'a'.repeat(40),
      git: { gitDir: '/x/git', commonDir: '/x/git', workTree: '/x/work' },
      disk: 'someone-else',
    };
    const local = await places.open(place);
    expect(local).toEqual({ workspace: '/x/work', git: place.git, rebuilt: false });
    expect(fs.existsSync(path.join(home, 'run-marks'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'hosted'))).toBe(false);
  });

  test('a disk id is made once per home: workers sharing a home share it, other homes differ', () => {
    const home = tempDir();
    const one = new RunPlaces({ store: null, home, author: AUTHOR }).disk();
    expect(one).toMatch(/^[0-9a-f]{24}$/);
    expect(new RunPlaces({ store: null, home, author: AUTHOR }).disk()).toBe(one);
    expect(new RunPlaces({ store: null, home: tempDir(), author: AUTHOR }).disk()).not.toBe(one);
  });

  test('host B works in a copy of its own at the recorded commit; its commit reaches host A through the store', async () => {
    const store = makeStore();
    const { a, b, homeA, homeB } = twoHosts(store);
    const place = await prepareOn(a, homeA, store, 'run-1');
    // A writes and commits a file (a tool call's step); the workflow records the commit.
    const onA = await a.open(place);
    expect(onA.workspace).toBe(place.git.workTree);
    fs.writeFileSync(path.join(onA.workspace, 'one.py'), 'one = 1\n');
    const first = await a.commit(place, onA, { message: 'aca: one', step: 's1', paths: ['one.py'] });
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    // B has never seen the run: it builds its copy under its own home, at A's commit.
    const atFirst = { ...place, commit: first! };
    const onB = await b.open(atFirst);
    expect(onB.workspace).toBe(path.join(homeB, 'hosted', runFolderName('run-1'), 'work'));
    expect(onB.rebuilt).toBe(true);
    expect(fs.readFileSync(path.join(onB.workspace, 'one.py'), 'utf8')).toBe('one = 1\n');
    // Opened again at the same commit, B starts at once from what it left.
    fs.writeFileSync(path.join(onB.workspace, 'left-by-a-test.txt'), 'x');
    expect((await b.open(atFirst)).rebuilt).toBe(false);
    // A commit of only the path a tool wrote leaves the test's leftovers out.
    fs.writeFileSync(path.join(onB.workspace, 'two.py'), 'two = 2\n');
    const second = await b.commit(atFirst, onB, { message: 'aca: two', step: 's2', paths: ['two.py'] });
    const files = execFileSync('git', ['--git-dir', store.url, 'ls-tree', '--name-only', second!], {
      encoding: 'utf8',
    });
    expect(files.trim().split('\n').sort()).toEqual(['one.py', 'two.py']);
    // A, at its own paths and marker at the first commit, is brought to the second.
    const again = await a.open({ ...place, commit: second! });
    expect(again.rebuilt).toBe(true);
    expect(fs.readFileSync(path.join(again.workspace, 'two.py'), 'utf8')).toBe('two = 2\n');
    expect(show(place.git.commonDir, `refs/heads/aca/run-1:two.py`)).toBe('two = 2\n');
  });

  test('a copy whose step died half-way is rebuilt: the marker goes before files change', async () => {
    const store = makeStore();
    const { a, b, homeA } = twoHosts(store);
    const place = await prepareOn(a, homeA, store, 'run-2');
    const onB = await b.open(place);
    b.unmark(place);
    fs.writeFileSync(path.join(onB.workspace, 'half.py'), 'half');
    const reopened = await b.open(place);
    expect(reopened.rebuilt).toBe(true);
    expect(fs.existsSync(path.join(reopened.workspace, 'half.py'))).toBe(false);
  });

  test('a retried step finds the push of its first try in the store and takes it', async () => {
    const store = makeStore();
    const { a, b, homeA } = twoHosts(store);
    const place = await prepareOn(a, homeA, store, 'run-3');
    const onA = await a.open(place);
    fs.writeFileSync(path.join(onA.workspace, 'x.py'), 'x = 1\n');
    // The first try pushes, then its worker dies before the workflow hears of the commit.
    const pushed = await a.commit(place, onA, { message: 'aca: x', step: 'ref/call-7', paths: ['x.py'] });
    // The retry runs on B from the recorded commit, does the same work, and is told the first push.
    const onB = await b.open(place);
    fs.writeFileSync(path.join(onB.workspace, 'x.py'), 'x = 1\n');
    await new Promise((resolve) => setTimeout(resolve, 1100)); // another commit time, another id
    const retried = await b.commit(place, onB, { message: 'aca: x', step: 'ref/call-7', paths: ['x.py'] });
    expect(retried).toBe(pushed);
    expect((await b.open({ ...place, commit: pushed! })).rebuilt).toBe(false);
    // Another step's push in between is someone else's work: refused, never overwritten.
    fs.writeFileSync(path.join(onB.workspace, 'y.py'), 'y');
    await expect(
      b.commit(place, onB, { message: 'aca: y', step: 'ref/call-8', paths: ['y.py'] }),
    ).rejects.toBeInstanceOf(GitStorePushRejectedError);
    const tip = execFileSync('git', ['--git-dir', store.url, 'rev-parse', 'refs/heads/aca/run-3'], {
      encoding: 'utf8',
    }).trim();
    expect(tip).toBe(pushed);
  });

  test('--tests originals a worker cannot see are written from the commit that added them', async () => {
    const store = makeStore();
    const { a, b, homeA } = twoHosts(store);
    const place = await prepareOn(a, homeA, store, 'run-4');
    const onA = await a.open(place);
    fs.mkdirSync(path.join(onA.workspace, 'tests'));
    fs.writeFileSync(path.join(onA.workspace, 'tests', 'test_x.py'), 'def test_x():\n    assert True\n');
    const added = await a.commit(place, onA, { message: 'aca: acceptance tests', step: 'acc' });
    const at = { ...place, commit: added! };
    const onB = await b.open(at);
    const missing = path.join(tempDir(), 'not-on-this-host');
    const folder = await b.acceptanceOriginals(at, onB, missing, added, ['tests/test_x.py']);
    expect(folder).not.toBe(missing);
    const original = path.join(folder, 'tests', 'test_x.py');
    expect(fs.readFileSync(original, 'utf8')).toBe('def test_x():\n    assert True\n');
    expect(fs.statSync(original).mode & 0o222).toBe(0);
    // On the disk the run was prepared on, the folder is used as it is; a folder at the same path
    // on another host is not the user's, and the commit's files are used there.
    const visible = tempDir();
    expect(await a.acceptanceOriginals(at, onA, visible, added, ['tests/test_x.py'])).toBe(visible);
    expect(await b.acceptanceOriginals(at, onB, visible, added, ['tests/test_x.py'])).toBe(folder);
  });

  test("copies of runs unused for three days are removed; recent ones and the run's own paths stay", async () => {
    const store = makeStore();
    const { a, b, homeA, homeB } = twoHosts(store);
    const old = await prepareOn(a, homeA, store, 'run-old');
    const recent = await prepareOn(a, homeA, store, 'run-recent');
    await b.open(old);
    await b.open(recent);
    const oldFolder = path.join(homeB, 'hosted', runFolderName('run-old'));
    const past = new Date(Date.now() - UNUSED_COPY_MS - 60_000);
    fs.utimesSync(oldFolder, past, past);
    fs.utimesSync(path.join(homeB, 'run-marks', `${runFolderName('run-old')}.json`), past, past);
    expect(b.pruneUnusedCopies(Date.now() + 2 * 3600_000)).toEqual([runFolderName('run-old')]);
    expect(fs.existsSync(oldFolder)).toBe(false);
    expect(fs.existsSync(path.join(homeB, 'hosted', runFolderName('run-recent')))).toBe(true);
    expect(fs.existsSync(old.git.workTree)).toBe(true);
    // Needed again, the copy is rebuilt from the store.
    expect((await b.open(old)).rebuilt).toBe(true);
  });

  test('run ids that differ only in odd characters get folders of their own', () => {
    expect(runFolderName('a/b')).not.toBe(runFolderName('a_b'));
    expect(runFolderName('../../etc')).not.toContain('/');
  });
});
