/**
 * An `aca eval` run prepared on a host that shares no folder with the command that started the
 * batch: prepareRun works in the host's own copy of the repository the batch names (made from the
 * git store when the host has none) and under the host's own workspaces root. A run input whose
 * copy name could lead elsewhere is refused before anything is written.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createRepoActivities,
  type PreparedRun,
  type PrepareRunInput,
} from '../../../src/activities/repo-activities';
import { evalRepositoryCopy, findRepoSource } from '../../../src/eval/repositories';
import { publishCopy } from '../../../src/eval/store-copies';
import { HostRuns, parseGitStoreLocation, type GitStoreLocation } from '../../../src/repo';
import { gitIn, writeFiles } from '../../helpers/repo-fixtures';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-eval-run-repo-');
const author = { name: 'aca', email: 'aca@localhost' };

function hostActivities(home: string, store: GitStoreLocation | null) {
  const activities = createRepoActivities({
    gitAuthor: author,
    sandboxMode: 'none',
    gitStore: store,
    host: new HostRuns({ store, home, workspacesRoot: path.join(home, 'workspaces'), author }),
    evalHome: home,
  });
  const env = new MockActivityEnvironment();
  return (input: PrepareRunInput) => env.run(activities.prepareRun, input) as Promise<PreparedRun>;
}

function runOf(workflowId: string, repoPath: string, baseCommit: string): PrepareRunInput {
  return {
    workflowId,
    language: 'python',
    repo: { path: repoPath, baseCommit, evalCopy: true },
    testCommand: null,
    setupCommand: null,
  };
}

describe("an eval run's repository on the host that prepares it", () => {
  let commandHome: string;
  let copy: string;
  let base: string;
  let fix: string;
  let store: GitStoreLocation;

  beforeAll(async () => {
    const root = tempDir();
    const source = path.join(root, 'repos', 'acme__lib');
    fs.mkdirSync(source, { recursive: true });
    gitIn(source, 'init', '--quiet', '--initial-branch=main');
    writeFiles(source, { 'lib.py': 'x = 1\n' });
    gitIn(source, 'add', '-A');
    gitIn(source, 'commit', '--quiet', '-m', 'base');
    base = gitIn(source, 'rev-parse', 'HEAD').trim();
    writeFiles(source, { 'lib.py': 'x = 2\n' });
    gitIn(source, 'commit', '--quiet', '-am', 'the fix');
    fix = gitIn(source, 'rev-parse', 'HEAD').trim();
    commandHome = path.join(root, 'command-home');
    copy = await evalRepositoryCopy(commandHome, findRepoSource(path.join(root, 'repos'), 'acme/lib'), [
      base,
    ]);
    gitIn(root, 'init', '--quiet', '--bare', 'store.git');
    store = parseGitStoreLocation(path.join(root, 'store.git'), root);
    await publishCopy(store, copy);
  });

  test("a host without the batch's copy makes its own from the store and puts the work tree under its own root", async () => {
    const home = tempDir();
    // The command's copy is on another host: not on this one's disk.
    const away = `${copy}.away`;
    fs.renameSync(copy, away);
    try {
      const prepared = await hostActivities(home, store)(runOf('batch-1/acme__lib-1', copy, base));
      const own = path.join(home, 'eval', 'repos', path.basename(copy));
      expect(prepared.baseCommit).toBe(base);
      expect(prepared.place.commonDir).toBe(path.join(own, '.git'));
      expect(prepared.place.workTree.startsWith(path.join(home, 'workspaces') + path.sep)).toBe(true);
      expect(fs.readFileSync(path.join(prepared.place.workTree, 'lib.py'), 'utf8')).toBe('x = 1\n');
      // Only base commits travel through the store: never the instance's fix.
      expect(() => gitIn(own, 'cat-file', '-e', `${fix}^{commit}`)).toThrow();
      expect(fs.existsSync(copy)).toBe(false);
    } finally {
      fs.renameSync(away, copy);
    }
  });

  test('the copy the batch names is used where it is on this host (one host, or a shared folder)', async () => {
    const home = tempDir();
    const prepared = await hostActivities(home, store)(runOf('batch-1/acme__lib-2', copy, base));
    expect(prepared.place.commonDir).toBe(path.join(copy, '.git'));
    expect(fs.existsSync(path.join(home, 'eval'))).toBe(false);
  });

  test('a run without evalCopy is prepared in the repository it names, never in a copy', async () => {
    const home = tempDir();
    const user = tempDir();
    gitIn(user, 'init', '--quiet', '--initial-branch=main');
    writeFiles(user, { 'a.py': 'a = 1\n' });
    gitIn(user, 'add', '-A');
    gitIn(user, 'commit', '--quiet', '-m', 'user');
    const head = gitIn(user, 'rev-parse', 'HEAD').trim();
    const prepared = await hostActivities(
      home,
      store,
    )({
      ...runOf('plain-1', user, head),
      repo: { path: user, baseCommit: head },
    });
    expect(fs.realpathSync(prepared.place.commonDir)).toBe(fs.realpathSync(path.join(user, '.git')));
    expect(fs.existsSync(path.join(home, 'eval'))).toBe(false);
  });

  test('a copy name that is not one (a parent folder, a name of the caller choosing) is refused, nothing written', async () => {
    const home = tempDir();
    const prepare = hostActivities(home, store);
    const elsewhere = path.join(home, 'eval');
    for (const named of [
      `${home}/eval/repos/x/..`,
      path.join(tempDir(), '.git'),
      '/etc',
      path.join(commandHome, 'eval', 'repos', 'acme__lib-notahash0000'),
    ]) {
      await expect(prepare(runOf('batch-1/bad', named, base))).rejects.toThrow(
        /does not name a repository copy of aca eval/,
      );
    }
    expect(fs.existsSync(elsewhere)).toBe(false);
    expect(fs.existsSync(path.join(home, 'workspaces'))).toBe(false);
  });
});
