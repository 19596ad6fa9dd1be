/**
 * prepareRun and a host step's commit of a turn's work with the git store: every commit of the run reaches the store before
 * the workflow records it; a retried step takes its own first try's commit; a step starts from
 * the recorded commit; a Reset's new execution replaces the commits the old one left.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createRepoActivities,
  type PreparedRun,
  type PrepareRunInput,
} from '../../../src/activities/repo-activities';
import { createWorkspaceActivities } from '../../../src/activities/workspace-activities';
import { parseGitStoreLocation, HostRuns, type GitStoreLocation } from '../../../src/repo';
import type { RunPlace } from '../../../src/shared/run-types';
import { tempDirs } from '../../helpers/temp-dirs';

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

/** prepareRun's input for a run without --repo: the host decides where its folders are. */
function runWithoutRepo(_home: string, workflowId: string): PrepareRunInput & { workspace: string } {
  return {
    workflowId,
    workspace: path.join(_home, 'workspaces', workflowId),
    language: 'python',
    repo: null,
    testCommand: null,
    setupCommand: null,
  };
}

/** A turn's work to commit, and the commit the run recorded before it. */
interface CommitStepInput {
  place: RunPlace;
  headCommit: string;
  message: string;
  step: string;
  execution: string;
}

/** A commit step of the run at `commit`, as the workflow asks for it. */
function stepAt(
  prepared: PreparedRun,
  commit: string,
  step = 'commit-1',
  execution = 'exec-1',
): CommitStepInput {
  return { place: prepared.place, headCommit: commit, message: `aca: ${step}`, step, execution };
}

function activitiesWith(store: GitStoreLocation, home: string) {
  const author = { name: 'aca', email: 'aca@localhost' };
  const activities = createRepoActivities({
    gitAuthor: author,
    sandboxMode: 'none',
    gitStore: store,
    host: new HostRuns({ store, home, workspacesRoot: path.join(home, 'workspaces'), author }),
  });
  const workspace = createWorkspaceActivities({
    sandboxMode: 'none',
    host: new HostRuns({ store, home, workspacesRoot: path.join(home, 'workspaces'), author }),
  });
  const env = new MockActivityEnvironment();
  return {
    prepareRun: (input: PrepareRunInput) => env.run(activities.prepareRun, input) as Promise<PreparedRun>,
    /** A turn's work, committed by the turn's own commit step. */
    commitWork: (input: CommitStepInput) => env.run(workspace.commitTurn, input) as Promise<string | null>,
  };
}

describe('with a store at the default path, given to the activities', () => {
  test('a run without --repo: its base and every commit are in the store', async () => {
    const home = tempDir();
    const store = parseGitStoreLocation(undefined, home);
    const acts = activitiesWith(store, home);
    const input = runWithoutRepo(home, 'fresh-1');
    const prepared = await acts.prepareRun(input);
    expect(storeTip(store, prepared.place.branch)).toBe(prepared.baseCommit);
    // prepareRun retried: the same base, pushed already.
    expect((await acts.prepareRun(input)).baseCommit).toBe(prepared.baseCommit);

    fs.writeFileSync(path.join(input.workspace, 'a.py'), 'x = 1\n');
    const step = stepAt(prepared, prepared.baseCommit);
    const first = await acts.commitWork(step);
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    expect(storeTip(store, prepared.place.branch)).toBe(first);
    // The same step retried takes its own commit; the next step has nothing to commit.
    expect(await acts.commitWork(step)).toBe(first);
    expect(await acts.commitWork(stepAt(prepared, first!, 'commit-2'))).toBeNull();
    expect(storeTip(store, prepared.place.branch)).toBe(first);
  });

  test('a step too large to commit fails at once, not retried, naming the file', async () => {
    const home = tempDir();
    const store = parseGitStoreLocation(undefined, home);
    const acts = activitiesWith(store, home);
    const prepared = await acts.prepareRun(runWithoutRepo(home, 'too-large'));
    const fd = fs.openSync(path.join(prepared.place.workTree, 'core.dump'), 'w');
    fs.writeSync(fd, 'x', 200 * 1024 * 1024);
    fs.closeSync(fd);
    const failure = await acts.commitWork(stepAt(prepared, prepared.baseCommit)).catch((err: unknown) => err);
    expect(failure).toMatchObject({
      type: 'WorkTreeTooLarge',
      nonRetryable: true,
      message: expect.stringContaining('core.dump of 200.0 MiB'),
    });
    expect(storeTip(store, prepared.place.branch)).toBe(prepared.baseCommit);
  });

  test('a step whose push failed pushes, when retried, the commit its first try made', async () => {
    const home = tempDir();
    const storeDir = path.join(tempDir(), 'store.git');
    sh('/', 'init', '--quiet', '--bare', storeDir);
    const store = parseGitStoreLocation(storeDir, home);
    const acts = activitiesWith(store, home);
    const input = runWithoutRepo(home, 'retry-1');
    const prepared = await acts.prepareRun(input);
    const step = stepAt(prepared, prepared.baseCommit);
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
      prepared.place.commonDir,
      'rev-parse',
      `refs/heads/${prepared.place.branch}`,
    ).trim();
    expect(unpushed).not.toBe(prepared.baseCommit);
    // ...and the retry pushes the commit the first try made, and reports it.
    fs.renameSync(`${store.url}.away`, store.url);
    expect(storeTip(store, prepared.place.branch)).toBe(prepared.baseCommit);
    expect(await acts.commitWork(step)).toBe(unpushed);
    expect(storeTip(store, prepared.place.branch)).toBe(unpushed);
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
    const acts = activitiesWith(store, home);
    const input = (id: string) => ({
      workflowId: id,
      workspace: path.join(home, 'workspaces', id),
      language: 'python' as const,
      repo: { path: repo, baseCommit: base },
      testCommand: 'true',
      setupCommand: null,
    });
    const prepared = await acts.prepareRun(input('repo-1'));
    expect(prepared.baseCommit).toBe(base);
    expect(storeTip(store, 'aca/repo-1')).toBe(base);
    fs.writeFileSync(path.join(prepared.place.workTree, 'b.txt'), 'b\n');
    const commit = await acts.commitWork(stepAt(prepared, base));
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

  test("a step starts from the recorded commit; after a Reset the new execution replaces the old one's commits", async () => {
    const home = tempDir();
    const storeDir = path.join(tempDir(), 'store.git');
    sh('/', 'init', '--quiet', '--bare', storeDir);
    const store = parseGitStoreLocation(storeDir, home);
    const acts = activitiesWith(store, home);
    const input = runWithoutRepo(home, 'reset-1');
    const prepared = await acts.prepareRun(input);
    const file = path.join(input.workspace, 'a.py');
    fs.writeFileSync(file, 'attempt = 1\n');
    const one = (await acts.commitWork(stepAt(prepared, prepared.baseCommit, 'commit-1')))!;
    fs.writeFileSync(file, 'attempt = 2\n');
    const two = (await acts.commitWork(stepAt(prepared, one, 'commit-2')))!;
    expect(storeTip(store, prepared.place.branch)).toBe(two);
    // A Reset to before attempt 2: a new execution, whose steps start from attempt 1's commit
    // (as every file tool call does, the tree is brought there first).
    const host = new HostRuns({
      store,
      home,
      workspacesRoot: path.join(home, 'workspaces'),
      author: { name: 'a', email: 'a@a' },
    });
    await host.atCommit(prepared.place, one);
    expect(fs.readFileSync(file, 'utf8')).toBe('attempt = 1\n');
    fs.writeFileSync(file, 'attempt = 2, again\n');
    const again = await acts.commitWork(stepAt(prepared, one, 'commit-2', 'exec-2'));
    expect(again).toMatch(/^[0-9a-f]{40}$/);
    expect(again).not.toBe(two);
    expect(sh('/', '--git-dir', prepared.place.commonDir, 'rev-parse', `${again}^`).trim()).toBe(one);
    // The branch and the store's branch are the new execution's.
    expect(storeTip(store, prepared.place.branch)).toBe(again);
    expect(sh('/', '--git-dir', prepared.place.commonDir, 'rev-parse', prepared.place.branch).trim()).toBe(
      again,
    );
  });
});
