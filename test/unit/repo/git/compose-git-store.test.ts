/**
 * The compose stack's git store, run here without Docker: its init script (deploy/git-store) in a
 * temp folder standing for the volume, and `git daemon` with the compose file's own arguments on
 * 127.0.0.1. Two workers' runs go through it with aca's own store calls, as the compose workers'
 * ACA_GIT_STORE makes them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  bringToCommit,
  pushRunCommit,
  storeBranchTip,
  parseGitStoreLocation,
  createFreshRunRepository,
  commitAll,
  type GitStoreLocation,
} from '../../../../src/repo';
import { compose, serviceEnv, serviceScript } from '../../../helpers/compose-file';
import { startGitDaemon, type GitDaemon } from '../../../helpers/git-daemon';
import { tempDirs } from '../../../helpers/temp-dirs';

const tempDir = tempDirs('aca-compose-store-');

const initEnv = serviceEnv('git-store-init');
/** The volume's folder in the containers, which a temp folder stands for here. */
const containerRoot = initEnv.GIT_STORE_ROOT;
const script = serviceScript('git-store-init').file;

const gitEnv = {
  PATH: process.env.PATH,
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

/** The init step as compose runs it, on `root`, the store given to this process's own user. */
function runInit(root: string) {
  return spawnSync('sh', [script], {
    encoding: 'utf8',
    env: {
      ...gitEnv,
      ...initEnv,
      GIT_STORE_ROOT: root,
      GIT_STORE_OWNER: `${process.getuid!()}:${process.getgid!()}`,
    },
  });
}

function storeGit(storeDir: string, ...args: string[]): string {
  return execFileSync('git', [`--git-dir=${storeDir}`, ...args], { encoding: 'utf8', env: gitEnv });
}

/** The compose service's `git daemon` arguments, serving `root` instead of the volume. */
function daemonArgs(root: string): string[] {
  const command = compose.services['git-store'].command as string[];
  expect(command.slice(0, 2)).toEqual(['git', 'daemon']);
  return command
    .slice(2)
    .filter((arg) => !arg.startsWith('--port='))
    .map((arg) => arg.split(containerRoot).join(root));
}

/** A worker's ACA_GIT_STORE from the compose file, with the daemon here in place of `git-store`. */
function workerStore(worker: string, daemon: GitDaemon): GitStoreLocation {
  const url = new URL(serviceEnv(worker).ACA_GIT_STORE);
  return parseGitStoreLocation(daemon.url(url.pathname.slice(1)), '/unused');
}

function runLayout(worker: string, id: string) {
  const home = path.join(tempDir(`aca-compose-${worker}-`), 'home');
  return { gitDir: path.join(home, 'git', `${id}.git`), workTree: path.join(home, 'workspaces', id) };
}

describe('the compose git store, served by git daemon', () => {
  let root: string;
  let storeDir: string;
  let daemon: GitDaemon;

  beforeAll(async () => {
    root = tempDir();
    storeDir = path.join(root, initEnv.GIT_STORE_REPOSITORY);
    const init = runInit(root);
    expect({ status: init.status, stderr: init.stderr }).toEqual({ status: 0, stderr: '' });
    daemon = await startGitDaemon(root, daemonArgs(root));
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  test('the init script makes one bare repository that keeps reflogs and that git daemon may serve', () => {
    expect(storeGit(storeDir, 'rev-parse', '--is-bare-repository').trim()).toBe('true');
    expect(storeGit(storeDir, 'config', 'core.logAllRefUpdates').trim()).toBe('always');
    // Nothing half made beside it.
    expect(fs.readdirSync(root)).toEqual([initEnv.GIT_STORE_REPOSITORY]);
  });

  test('a step pushed by one worker reaches the other through git://, and a rerun of the init keeps it', async () => {
    const [first, second] = ['aca-worker-1', 'aca-worker-2'];
    const branch = 'aca/compose-run';
    const storeA = workerStore(first, daemon);
    const layoutA = runLayout(first, 'compose-run');
    const made = await createFreshRunRepository({ ...layoutA, branch });
    await pushRunCommit(storeA, made, branch, made.baseCommit, null);
    fs.writeFileSync(path.join(layoutA.workTree, 'app.py'), 'def add(a, b):\n    return a + b\n');
    const step = await commitAll(made, 'aca: step');
    expect(step).toBeTruthy();
    await pushRunCommit(storeA, made, branch, step!, made.baseCommit);
    expect(storeGit(storeDir, 'rev-parse', `refs/heads/${branch}`).trim()).toBe(step);

    const storeB = workerStore(second, daemon);
    const layoutB = runLayout(second, 'compose-run');
    const brought = await bringToCommit(storeB, { ...layoutB, branch, commit: step! });
    expect(brought).toMatchObject({ fetched: true, changed: true });
    expect(fs.readFileSync(path.join(layoutB.workTree, 'app.py'), 'utf8')).toBe(
      'def add(a, b):\n    return a + b\n',
    );

    // The store logged both moves of the branch: the way back if one is ever a mistake.
    const reflog = storeGit(storeDir, 'reflog', '--format=%H', `refs/heads/${branch}`).trim().split('\n');
    expect(reflog).toEqual([step, made.baseCommit]);

    // A restarted stack runs the init again: the store and its branches stay as they were.
    const again = runInit(root);
    expect(again.status).toBe(0);
    expect(again.stdout).not.toMatch(/created/);
    expect(await storeBranchTip(storeB, brought.commonDir, branch)).toBe(step);
  });
});

describe('the init script', () => {
  test('refuses a folder in the way that is no repository, and leaves it as it is', () => {
    const root = tempDir();
    const inTheWay = path.join(root, initEnv.GIT_STORE_REPOSITORY);
    fs.mkdirSync(inTheWay);
    fs.writeFileSync(path.join(inTheWay, 'notes.txt'), 'mine\n');
    const init = runInit(root);
    expect(init.status).not.toBe(0);
    expect(init.stderr).toContain('is not a bare git repository');
    expect(fs.readdirSync(inTheWay)).toEqual(['notes.txt']);
  });

  test('leaves no half-made store behind a run stopped before the move, and makes it whole next time', () => {
    const root = tempDir();
    const partial = path.join(root, `.${initEnv.GIT_STORE_REPOSITORY}.partial`);
    fs.mkdirSync(partial);
    fs.writeFileSync(path.join(partial, 'HEAD'), 'half\n');
    expect(runInit(root).status).toBe(0);
    expect(fs.readdirSync(root)).toEqual([initEnv.GIT_STORE_REPOSITORY]);
    expect(
      storeGit(path.join(root, initEnv.GIT_STORE_REPOSITORY), 'rev-parse', '--is-bare-repository').trim(),
    ).toBe('true');
  });
});
