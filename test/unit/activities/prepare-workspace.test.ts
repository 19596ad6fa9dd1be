/**
 * prepareWorkspace on the run's host, a step of its own: the acceptance tests copied into the
 * work tree read-only and committed there. It opens no turn; prepareRun prepares no workspace.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import {
  createRepoActivities,
  type PreparedRun,
  type PrepareRunInput,
} from '../../../src/activities/repo-activities';
import {
  createWorkspaceActivities,
  type PreparedWorkspace,
  type PrepareWorkspaceInput,
} from '../../../src/activities/workspace-activities';
import { HostRuns } from '../../../src/repo';
import type { RunPlace } from '../../../src/shared/run-types';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-prepare-workspace-');
const author = { name: 'aca', email: 'aca@localhost' };

/** prepareRun's input for a run without --repo, its workspace under `home`. */
function runWithoutRepo(home: string): PrepareRunInput {
  return {
    workflowId: 'wf-prepare',
    workspace: path.join(home, 'workspaces', 'wf-prepare'),
    language: 'python',
    repo: null,
    testCommand: null,
    setupCommand: null,
  };
}

async function preparedRun(home: string) {
  const host = new HostRuns({ store: null, home, workspacesRoot: path.join(home, 'workspaces'), author });
  const repo = createRepoActivities({ gitAuthor: author, sandboxMode: 'none', gitStore: null, host });
  const env = new MockActivityEnvironment();
  const prepared = (await env.run(repo.prepareRun, runWithoutRepo(home))) as PreparedRun;
  const place: RunPlace = prepared.place;
  const headCommit = prepared.startCommit;
  const workspace = createWorkspaceActivities({ sandboxMode: 'none', host });
  const prepare = (input: PrepareWorkspaceInput) =>
    env.run(workspace.prepareWorkspace, input) as Promise<PreparedWorkspace>;
  return { prepared, place, headCommit, prepare };
}

function acceptanceDir(): string {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, 'tests'));
  fs.writeFileSync(path.join(dir, 'tests', 'test_a.py'), 'def test_a():\n    assert True\n');
  return dir;
}

const branchTip = (prepared: PreparedRun) =>
  execFileSync(
    'git',
    ['--git-dir', prepared.place.gitDir, 'rev-parse', `refs/heads/${prepared.place.branch}`],
    {
      encoding: 'utf8',
    },
  ).trim();

test('prepareRun makes the branch and nothing on it: the workspace is a step of its own', async () => {
  const home = tempDir();
  const { prepared } = await preparedRun(home);
  expect(prepared).not.toHaveProperty('workspace');
  expect(branchTip(prepared)).toBe(prepared.startCommit);
  expect(fs.existsSync(path.join(prepared.place.workTree, 'tests'))).toBe(false);
}, 30_000);

test('the tests are committed on the recorded commit, read-only, and a retry commits the same tree', async () => {
  const home = tempDir();
  const { prepared, place, headCommit, prepare } = await preparedRun(home);
  const input: PrepareWorkspaceInput = {
    testsDir: acceptanceDir(),
    place,
    headCommit,
    commitMessage: 'aca: acceptance tests given with --tests',
    execution: 'run-1',
  };
  const done = await prepare(input);
  expect(done).toEqual({
    protectedPaths: ['tests/test_a.py'],
    commit: expect.stringMatching(/^[0-9a-f]{40}$/) as unknown,
  });
  expect(done.commit).toBe(branchTip(prepared));
  const treeAndParent = (commit: string) =>
    execFileSync('git', ['--git-dir', prepared.place.gitDir, 'show', '-s', '--format=%T %P', commit], {
      encoding: 'utf8',
    });
  expect(treeAndParent(done.commit!).trim().split(' ')[1]).toBe(prepared.startCommit);
  const copy = path.join(prepared.place.workTree, 'tests', 'test_a.py');
  expect(fs.readFileSync(copy, 'utf8')).toContain('def test_a');
  expect(fs.statSync(copy).mode & 0o222).toBe(0);

  // Retried (say the completion was lost): the step starts again from the recorded commit and
  // commits the same tree on it. A second later, so that a commit made again has an id of its own.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const again = await prepare(input);
  expect(again.protectedPaths).toEqual(done.protectedPaths);
  expect(treeAndParent(again.commit!)).toBe(treeAndParent(done.commit!));
}, 30_000);

test('without a --tests folder nothing is committed', async () => {
  const home = tempDir();
  const { prepared, place, headCommit, prepare } = await preparedRun(home);
  const done = await prepare({
    testsDir: null,
    place,
    headCommit,
    commitMessage: 'aca: acceptance tests given with --tests',
    execution: 'run-1',
  });
  expect(done).toEqual({ protectedPaths: [], commit: null });
  expect(branchTip(prepared)).toBe(prepared.startCommit);
}, 30_000);

test('a --tests folder the worker cannot read fails the step at once, not retried', async () => {
  const home = tempDir();
  const { prepared, place, headCommit, prepare } = await preparedRun(home);
  const missing = path.join(home, 'no-such-tests');
  const failure = await prepare({
    testsDir: missing,
    place,
    headCommit,
    commitMessage: 'm',
    execution: 'run-1',
  }).then(
    () => null,
    (err: unknown) => err,
  );
  expect(failure).toMatchObject({
    message: `tests folder ${missing} does not exist on the worker`,
    type: 'BadRunInput',
    nonRetryable: true,
  });
  expect(branchTip(prepared)).toBe(prepared.startCommit);
}, 30_000);
