/**
 * prepareWorkspace on the run's host: the acceptance tests copied and committed, and, when the
 * workflow asks, the Planner's turn opened in the same step, seeing the tests it now protects.
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
import type { TurnOpening } from '../../../src/activities/agent-activities';
import { openTurn } from '../../../src/agents/agent-turn';
import type { OpenTurnInput } from '../../../src/agents/turn-context';
import { HostRuns } from '../../../src/repo';
import { FileConversationStore } from '../../../src/store/conversation-store';
import type { RunPlace } from '../../../src/shared/run-types';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-prepare-workspace-');
const author = { name: 'aca', email: 'aca@localhost' };

/** Opens turns into this home's conversations, with one lesson to recall; records each recall. */
function plannerOpener(home: string) {
  const conversations = new FileConversationStore(path.join(home, 'conversations'));
  const recalled: string[] = [];
  const opener = (input: OpenTurnInput) =>
    openTurn(conversations, input, {
      loadReport: () => Promise.resolve(null),
      recallLessons: (query) => {
        recalled.push(query.task);
        return Promise.resolve([
          {
            task: 'an older task',
            rootCause: 'off by one',
            fixHypothesis: 'use <=',
            fix: null,
            similarity: 0.9,
          },
        ]);
      },
    });
  return { conversations, recalled, opener };
}

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
  const place: RunPlace = {
    workflowId: 'wf-prepare',
    branch: prepared.branch,
    commit: prepared.startCommit,
    git: prepared.git,
    disk: prepared.queues.disk,
  };
  const { conversations, recalled, opener } = plannerOpener(home);
  const workspace = createWorkspaceActivities({ sandboxMode: 'none', host, openTurn: opener });
  const prepare = (input: PrepareWorkspaceInput) =>
    env.run(workspace.prepareWorkspace, input) as Promise<PreparedWorkspace>;
  return { prepared, place, conversations, recalled, prepare };
}

function acceptanceDir(): string {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, 'tests'));
  fs.writeFileSync(path.join(dir, 'tests', 'test_a.py'), 'def test_a():\n    assert True\n');
  return dir;
}

const plannerOpening: TurnOpening = {
  ref: 'wf-prepare/first-run/run-1/planner',
  model: 'stub',
  context: {
    role: 'planner',
    task: 'Write a.py',
    language: 'python',
    attempt: 1,
    maxIterations: 3,
    // What the workflow knew before the step: nothing protected yet.
    protectedPaths: [],
  },
  recallLessons: { workflowId: 'wf-prepare', task: 'Write a.py' },
};

test("the Planner's turn opens after the tests are committed, protecting them, and a retry opens nothing twice", async () => {
  const home = tempDir();
  const { prepared, place, conversations, recalled, prepare } = await preparedRun(home);
  const input: PrepareWorkspaceInput = {
    testsDir: acceptanceDir(),
    place,
    commitMessage: 'aca: acceptance tests given with --tests',
    execution: 'run-1',
    openAfter: plannerOpening,
  };
  const done = await prepare(input);
  expect(done).toEqual({
    protectedPaths: ['tests/test_a.py'],
    commit: expect.stringMatching(/^[0-9a-f]{40}$/) as unknown,
    openedRef: plannerOpening.ref,
  });
  const committed = execFileSync(
    'git',
    ['--git-dir', prepared.git.gitDir, 'ls-tree', '-r', '--name-only', done.commit!],
    { encoding: 'utf8' },
  );
  expect(committed.split('\n')).toContain('tests/test_a.py');

  const conversation = await conversations.load(plannerOpening.ref);
  expect(conversation).toMatchObject({
    role: 'planner',
    workspace: prepared.git.workTree,
    protectedPaths: ['tests/test_a.py'],
  });
  const firstMessage = conversation.entries[1]!;
  expect(firstMessage.kind).toBe('user');
  expect(JSON.stringify(firstMessage)).toContain('off by one');
  expect(recalled).toEqual(['Write a.py']);

  // Retried (say the completion was lost): the step starts again from the recorded commit and
  // commits the same tree on it; the turn, already open, is not opened again.
  // A second later, so that a commit made again has a date (and an id) of its own.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const again = await prepare(input);
  expect(again).toMatchObject({ protectedPaths: done.protectedPaths, openedRef: done.openedRef });
  const treeAndParent = (commit: string) =>
    execFileSync('git', ['--git-dir', prepared.git.gitDir, 'show', '-s', '--format=%T %P', commit], {
      encoding: 'utf8',
    });
  expect(treeAndParent(again.commit!)).toBe(treeAndParent(done.commit!));
  expect(recalled).toEqual(['Write a.py']);
}, 30_000);

test('without openAfter no turn is opened', async () => {
  const home = tempDir();
  const { place, conversations, recalled, prepare } = await preparedRun(home);
  const done = await prepare({
    testsDir: null,
    place,
    commitMessage: 'aca: acceptance tests given with --tests',
    execution: 'run-1',
  });
  expect(done).toEqual({ protectedPaths: [], commit: null });
  expect(await conversations.exists(plannerOpening.ref)).toBe(false);
  expect(recalled).toEqual([]);
}, 30_000);

describe('prepareRun doing the workspace step', () => {
  async function prepareWith(
    home: string,
    more: Partial<PrepareRunInput> = {},
    withStore = false,
  ): Promise<{ prepared: PreparedRun; conversations: FileConversationStore; recalled: string[] }> {
    const store = withStore
      ? { url: path.join(home, 'store.git'), scheme: 'file' as const, display: 'store', isDefault: false }
      : null;
    if (store) execFileSync('git', ['init', '-q', '--bare', store.url]);
    const host = new HostRuns({ store, home, workspacesRoot: path.join(home, 'workspaces'), author });
    const { conversations, recalled, opener } = plannerOpener(home);
    const repo = createRepoActivities({
      gitAuthor: author,
      sandboxMode: 'none',
      gitStore: store,
      host,
      openTurn: opener,
    });
    const input: PrepareRunInput = {
      ...runWithoutRepo(home),
      workspaceStep: {
        testsDir: acceptanceDir(),
        commitMessage: 'aca: acceptance tests given with --tests',
        execution: 'run-1',
        openAfter: plannerOpening,
      },
      ...more,
    };
    const prepared = (await new MockActivityEnvironment().run(repo.prepareRun, input)) as PreparedRun;
    return { prepared, conversations, recalled };
  }
  const branchTip = (prepared: PreparedRun) =>
    execFileSync('git', ['--git-dir', prepared.git.gitDir, 'rev-parse', `refs/heads/${prepared.branch}`], {
      encoding: 'utf8',
    }).trim();

  test('a run without a setup command or a store: the tests committed on the new branch, the Planner opened; a retry commits the same tree', async () => {
    const home = tempDir();
    const { prepared, conversations, recalled } = await prepareWith(home);
    expect(prepared.workspace).toEqual({
      protectedPaths: ['tests/test_a.py'],
      commit: branchTip(prepared),
      openedRef: plannerOpening.ref,
    });
    const parent = execFileSync(
      'git',
      ['--git-dir', prepared.git.gitDir, 'rev-parse', `${prepared.workspace!.commit}^`],
      {
        encoding: 'utf8',
      },
    ).trim();
    expect(parent).toBe(prepared.startCommit);
    expect(fs.readFileSync(path.join(prepared.git.workTree, 'tests', 'test_a.py'), 'utf8')).toContain(
      'def test_a',
    );
    expect(await conversations.load(plannerOpening.ref)).toMatchObject({
      protectedPaths: ['tests/test_a.py'],
    });
    expect(recalled).toEqual(['Write a.py']);

    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await prepareWith(home);
    expect(again.prepared.startCommit).toBe(prepared.startCommit);
    expect(again.prepared.workspace).toMatchObject({
      protectedPaths: ['tests/test_a.py'],
      openedRef: plannerOpening.ref,
    });
    const tree = (commit: string) =>
      execFileSync('git', ['--git-dir', prepared.git.gitDir, 'show', '-s', '--format=%T %P', commit], {
        encoding: 'utf8',
      });
    expect(tree(again.prepared.workspace!.commit!)).toBe(tree(prepared.workspace!.commit!));
    expect(branchTip(again.prepared)).toBe(again.prepared.workspace!.commit);
    expect(again.recalled).toEqual([]);
  }, 30_000);

  test('a --tests folder the worker cannot read fails the step at once, before anything is made', async () => {
    const home = tempDir();
    const missing = path.join(home, 'no-such-tests');
    const failure = await prepareWith(home, {
      workspaceStep: { testsDir: missing, commitMessage: 'm', execution: 'run-1' },
    }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toMatchObject({
      message: `tests folder ${missing} does not exist on the worker`,
      type: 'BadRunInput',
      nonRetryable: true,
    });
    expect(fs.existsSync(path.join(home, 'workspaces', 'wf-prepare'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'git'))).toBe(false);
  }, 30_000);

  test('left to the host queue for a --repo run (its baseline comes first): nothing copied, nothing opened', async () => {
    const home = tempDir();
    const user = path.join(home, 'project');
    fs.mkdirSync(user);
    const inUser = (...args: string[]) =>
      execFileSync('git', ['-C', user, ...args], { encoding: 'utf8' }).trim();
    inUser('init', '-q');
    fs.writeFileSync(path.join(user, 'a.py'), 'x = 1\n');
    inUser('add', '-A');
    inUser('-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-q', '-m', 'base');
    const { prepared, conversations } = await prepareWith(home, {
      repo: { path: user, baseCommit: inUser('rev-parse', 'HEAD') },
    });
    expect(prepared).not.toHaveProperty('workspace');
    expect(branchTip(prepared)).toBe(prepared.startCommit);
    expect(fs.existsSync(path.join(prepared.git.workTree, 'tests'))).toBe(false);
    expect(await conversations.exists(plannerOpening.ref)).toBe(false);
  }, 30_000);

  test.each([
    ['a setup command runs first', { setupCommand: 'make deps' }, false],
    ['a git store (the run may move)', {}, true],
  ])(
    'left to the host queue when %s: nothing copied, nothing opened',
    async (_name, more, withStore) => {
      const home = tempDir();
      const { prepared, conversations } = await prepareWith(home, more, withStore);
      expect(prepared).not.toHaveProperty('workspace');
      expect(branchTip(prepared)).toBe(prepared.startCommit);
      expect(fs.existsSync(path.join(prepared.git.workTree, 'tests'))).toBe(false);
      expect(await conversations.exists(plannerOpening.ref)).toBe(false);
    },
    30_000,
  );
});
