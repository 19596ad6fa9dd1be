/**
 * prepareRun and commitWork with the git store: on one host with the default store (under
 * ACA_HOME) every commit of the run reaches the store, and everything else is as before.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createRepoActivities,
  type CommitWorkInput,
  type PreparedRun,
  type PrepareRunInput,
} from '../../src/activities/repo-activities';
import { parseGitStoreLocation, type GitStoreLocation } from '../../src/repo/git-store-location';
import { tempDirs } from '../helpers/temp-dirs';

const tempDir = tempDirs('aca-store-activities-');

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: '/nonexistent',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'u',
      GIT_AUTHOR_EMAIL: 'u@u',
      GIT_COMMITTER_NAME: 'u',
      GIT_COMMITTER_EMAIL: 'u@u',
    },
  });
}

function storeTip(store: GitStoreLocation, branch: string): string | null {
  try {
    return sh('/', '--git-dir', store.url, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`).trim();
  } catch {
    return null;
  }
}

/** prepareRun's input for a run without --repo, its folders under `home`. */
function runWithoutRepo(home: string, workflowId: string): PrepareRunInput {
  return {
    workflowId,
    workspace: path.join(home, 'workspaces', workflowId),
    language: 'python',
    repo: null,
    gitDir: path.join(home, 'git', `${workflowId}.git`),
    testCommand: null,
    setupCommand: null,
  };
}

function activitiesWith(store: GitStoreLocation) {
  const activities = createRepoActivities({
    gitAuthor: { name: 'aca', email: 'aca@localhost' },
    sandboxMode: 'none',
    gitStore: store,
  });
  const env = new MockActivityEnvironment();
  return {
    prepareRun: (input: PrepareRunInput) => env.run(activities.prepareRun, input) as Promise<PreparedRun>,
    commitWork: (input: CommitWorkInput) => env.run(activities.commitWork, input) as Promise<string | null>,
  };
}

describe('with a store at the default path, given to the activities', () => {
  test('a run without --repo: its base and every commit are in the store', async () => {
    const home = tempDir();
    const store = parseGitStoreLocation(undefined, home);
    const acts = activitiesWith(store);
    const input = runWithoutRepo(home, 'fresh-1');
    const prepared = await acts.prepareRun(input);
    expect(storeTip(store, prepared.branch)).toBe(prepared.baseCommit);
    // prepareRun retried: the same base, pushed already.
    expect((await acts.prepareRun(input)).baseCommit).toBe(prepared.baseCommit);

    fs.writeFileSync(path.join(input.workspace, 'a.py'), 'x = 1\n');
    const step = { git: prepared.git, branch: prepared.branch, message: 'aca: attempt 1, coder' };
    const first = await acts.commitWork(step);
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    expect(storeTip(store, prepared.branch)).toBe(first);
    expect(await acts.commitWork(step)).toBeNull();
    expect(storeTip(store, prepared.branch)).toBe(first);
  });

  test('a step too large to commit fails at once, not retried, naming the file', async () => {
    const home = tempDir();
    const store = parseGitStoreLocation(undefined, home);
    const acts = activitiesWith(store);
    const prepared = await acts.prepareRun(runWithoutRepo(home, 'too-large'));
    const fd = fs.openSync(path.join(prepared.git.workTree, 'core.dump'), 'w');
    fs.writeSync(fd, 'x', 200 * 1024 * 1024);
    fs.closeSync(fd);
    const failure = await acts
      .commitWork({ git: prepared.git, branch: prepared.branch, message: 'aca: attempt 1, tester' })
      .catch((err: unknown) => err);
    expect(failure).toMatchObject({
      type: 'WorkTreeTooLarge',
      nonRetryable: true,
      message: expect.stringContaining('core.dump of 200.0 MiB'),
    });
    expect(storeTip(store, prepared.branch)).toBe(prepared.baseCommit);
  });

  test('a step whose push failed pushes, when retried, the commit its first try made', async () => {
    const home = tempDir();
    const storeDir = path.join(tempDir(), 'store.git');
    sh('/', 'init', '--quiet', '--bare', storeDir);
    const store = parseGitStoreLocation(storeDir, home);
    const acts = activitiesWith(store);
    const input = runWithoutRepo(home, 'retry-1');
    const prepared = await acts.prepareRun(input);
    const step = { git: prepared.git, branch: prepared.branch, message: 'aca: attempt 1, coder' };
    // The store goes away after the commit is made: the step fails, to be retried...
    fs.writeFileSync(path.join(input.workspace, 'a.py'), 'x = 2\n');
    fs.renameSync(store.url, `${store.url}.away`);
    const failed = await acts.commitWork(step).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(ApplicationFailure);
    expect(failed).toMatchObject({ type: 'GitStoreUnreachable', nonRetryable: false });
    expect((failed as Error).message).toContain(store.url);
    const unpushed = sh(
      '/',
      '--git-dir',
      prepared.git.commonDir,
      'rev-parse',
      `refs/heads/${prepared.branch}`,
    ).trim();
    expect(unpushed).not.toBe(prepared.baseCommit);
    // ...and the retry, with nothing left to commit, pushes the commit the first try made.
    fs.renameSync(`${store.url}.away`, store.url);
    expect(storeTip(store, prepared.branch)).toBe(prepared.baseCommit);
    expect(await acts.commitWork(step)).toBeNull();
    expect(storeTip(store, prepared.branch)).toBe(unpushed);
  });

  test('a run with --repo: the base is pushed when it starts; a branch the store holds from elsewhere is refused', async () => {
    const home = tempDir();
    const repo = path.join(tempDir(), 'repo');
    fs.mkdirSync(repo);
    sh(repo, 'init', '--quiet', '--initial-branch=main');
    fs.writeFileSync(path.join(repo, 'README.md'), '# hi\n');
    sh(repo, 'add', '-A');
    sh(repo, 'commit', '--quiet', '-m', 'base');
    const base = sh(repo, 'rev-parse', 'HEAD').trim();
    const store = parseGitStoreLocation(undefined, home);
    const acts = activitiesWith(store);
    const input = (id: string) => ({
      workflowId: id,
      workspace: path.join(home, 'workspaces', id),
      language: 'python' as const,
      repo: { path: repo, baseCommit: base },
      gitDir: null,
      testCommand: 'true',
      setupCommand: null,
    });
    const prepared = await acts.prepareRun(input('repo-1'));
    expect(prepared.baseCommit).toBe(base);
    expect(storeTip(store, 'aca/repo-1')).toBe(base);
    fs.writeFileSync(path.join(prepared.git.workTree, 'b.txt'), 'b\n');
    const commit = await acts.commitWork({ git: prepared.git, branch: prepared.branch, message: 'aca: b' });
    expect(storeTip(store, 'aca/repo-1')).toBe(commit);

    // A store branch of the same name at another commit (a run of that id elsewhere) is kept.
    const other = sh(repo, 'commit-tree', `${base}^{tree}`, '-p', base, '-m', 'elsewhere').trim();
    sh(repo, 'push', '--quiet', store.url, `${other}:refs/heads/aca/repo-2`);
    const refused = await acts.prepareRun(input('repo-2')).catch((err: unknown) => err);
    expect(refused).toMatchObject({ type: 'GitStorePushRejected', nonRetryable: true });
    expect((refused as Error).message).toContain(
      `branch aca/repo-2 is already in the git store ${store.display} (at ${other})`,
    );
    expect((refused as Error).message).toContain('aca discard');
    expect(storeTip(store, 'aca/repo-2')).toBe(other);
    // The user's checkout is untouched throughout.
    expect(sh(repo, 'status', '--porcelain')).toBe('');
    expect(sh(repo, 'rev-parse', 'HEAD').trim()).toBe(base);
  });
});
