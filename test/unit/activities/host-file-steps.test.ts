/**
 * The steps of a run's host that read or write its files, as its files queue takes them: a file
 * tool call, a turn's opening and a turn's commit, each an activity of its own.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';
import {
  createAgentActivities,
  type OpenedTurn,
  type TurnOpening,
  type ToolCallInput,
} from '../../../src/activities/agent-activities';
import type { ToolCallOutcome } from '../../../src/agents/agent-turn';
import type { FileToolName } from '../../../src/tools/file-tools';
import { createRepoActivities, type PreparedRun } from '../../../src/activities/repo-activities';
import {
  createWorkspaceActivities,
  type CommitTurnInput,
} from '../../../src/activities/workspace-activities';
import { HostRuns } from '../../../src/repo';
import { FileConversationStore } from '../../../src/store/conversation-store';
import { FileReportStore } from '../../../src/store/report-store';
import { BUILTIN_PRICES } from '../../../src/llm/model-prices';
import type { RunPlace } from '../../../src/shared/run-types';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-host-file-steps-');
const coderOpening: TurnOpening = {
  ref: 'wf-here/run/coder-2',
  model: 'stub',
  context: {
    role: 'coder',
    task: 'Write a.py',
    language: 'python',
    attempt: 2,
    maxIterations: 3,
    protectedPaths: [],
  },
};
const author = { name: 'aca', email: 'aca@localhost' };

interface Setup {
  place: RunPlace;
  /** The commit the run recorded when it was prepared. */
  headCommit: string;
  conversations: FileConversationStore;
  /** A create_file or read_file call as the host's files queue takes it. */
  call(input: Partial<ToolCallInput> & { toolCallId: string }, tool?: FileToolName): Promise<ToolCallOutcome>;
  open(input?: { place?: RunPlace; headCommit?: string }): Promise<OpenedTurn>;
  commitTurn(input?: Partial<CommitTurnInput>): Promise<string | null>;
  git(...args: string[]): string;
}

async function preparedRun(): Promise<Setup> {
  const home = tempDir();
  const host = new HostRuns({ store: null, home, workspacesRoot: path.join(home, 'workspaces'), author });
  const repo = createRepoActivities({ gitAuthor: author, sandboxMode: 'none', gitStore: null, host });
  // Quiet: the failures some cases expect would be logged as warnings.
  const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  const prepared = (await env.run(repo.prepareRun, {
    workflowId: 'wf-here',
    workspace: path.join(home, 'workspaces', 'wf-here'),
    language: 'python' as const,
    repo: null,
    testCommand: null,
    setupCommand: null,
  })) as PreparedRun;
  const place: RunPlace = prepared.place;
  const headCommit = prepared.startCommit;
  const conversations = new FileConversationStore(path.join(home, 'conversations'));
  const activities = createAgentActivities({
    store: conversations,
    reports: new FileReportStore(path.join(home, 'conversations')),
    chatModel: { complete: () => Promise.reject(new Error('no model here')) },
    recallLessons: () => Promise.resolve([]),
    logPrompts: false,
    prices: BUILTIN_PRICES,
    host,
  });
  const workspace = createWorkspaceActivities({ host, sandboxMode: 'none' });
  return {
    place,
    headCommit,
    conversations,
    call: (input, tool = 'create_file') =>
      env.run(activities[tool], {
        ref: 'wf-here/run/coder-1',
        place,
        headCommit,
        execution: 'run',
        ...input,
      }) as Promise<ToolCallOutcome>,
    open: (input = {}) =>
      env.run(activities.openTurn, {
        open: coderOpening,
        place,
        headCommit,
        ...input,
      }) as Promise<OpenedTurn>,
    commitTurn: (input = {}) =>
      env.run(workspace.commitTurn, {
        place,
        headCommit,
        message: 'aca: attempt 1, coder: wrote a.py',
        step: 'coder-1',
        execution: 'run',
        ...input,
      }) as Promise<string | null>,
    git: (...args) =>
      execFileSync('git', ['--git-dir', place.gitDir, '--work-tree', place.workTree, ...args], {
        encoding: 'utf8',
      }).trim(),
  };
}

/** A Coder's conversation whose last answer asked for `calls` (name, JSON arguments). */
async function askedFor(
  setup: Setup,
  calls: Array<[id: string, name: string, args: object]>,
  ref = 'wf-here/run/coder-1',
): Promise<void> {
  await setup.conversations.save({
    ref,
    role: 'coder',
    model: 'stub',
    language: 'python',
    workspace: setup.place.workTree,
    protectedPaths: [],
    entries: [
      { kind: 'system', content: 'coder' },
      { kind: 'user', content: 'write a.py' },
      {
        kind: 'assistant',
        content: null,
        toolCalls: calls.map(([id, name, args]) => ({ id, name, arguments: JSON.stringify(args) })),
      },
    ],
    toolResults: {},
    steps: [
      {
        toolCalls: calls.map(([id, name]) => ({
          kind: 'file' as const,
          id,
          name: name as FileToolName,
          target: '',
        })),
        finished: null,
        progress: true,
        usage: { prompt: 0, completion: 0 },
        note: null,
      },
    ],
  });
}

const workFile = (setup: Setup, name: string) => path.join(setup.place.workTree, name);

describe("a file tool call on the host's queue", () => {
  test('runs in the work tree at the recorded commit, once per call', async () => {
    const setup = await preparedRun();
    await askedFor(setup, [['c1', 'create_file', { path: 'a.py', content: 'x = 1\n' }]]);
    expect(await setup.call({ toolCallId: 'c1' })).toEqual({ ok: true });
    expect(fs.readFileSync(workFile(setup, 'a.py'), 'utf8')).toBe('x = 1\n');
    expect((await setup.conversations.load('wf-here/run/coder-1')).toolResults.c1).toMatchObject({
      ok: true,
    });
    // A retry finds the stored answer and does not write again.
    fs.writeFileSync(workFile(setup, 'a.py'), 'changed since\n');
    expect(await setup.call({ toolCallId: 'c1' })).toEqual({ ok: true });
    expect(fs.readFileSync(workFile(setup, 'a.py'), 'utf8')).toBe('changed since\n');
  });

  test('a turn an earlier execution opened (a Reset) is taken over, and the call names the copy it wrote', async () => {
    const setup = await preparedRun();
    await askedFor(
      setup,
      [['c1', 'create_file', { path: 'a.py', content: 'x = 1\n' }]],
      'wf-here/old/coder-1',
    );
    const answer = await setup.call({ toolCallId: 'c1', openedAs: 'wf-here/old/coder-1' });
    expect(answer).toEqual({ ok: true, ref: 'wf-here/run/coder-1' });
    expect((await setup.conversations.load('wf-here/run/coder-1')).toolResults.c1).toMatchObject({
      ok: true,
    });
    // The earlier execution's conversation stays as it was.
    expect((await setup.conversations.load('wf-here/old/coder-1')).toolResults).toEqual({});
  });

  test('keeps the file tools inside the work tree: links, parent folders and absolute paths', async () => {
    const setup = await preparedRun();
    const outside = tempDir();
    fs.symlinkSync(outside, workFile(setup, 'link'));
    await askedFor(setup, [
      ['c1', 'create_file', { path: 'link/planted.py', content: 'x' }],
      ['c2', 'create_file', { path: '../escape.py', content: 'x' }],
      ['c3', 'create_file', { path: path.join(outside, 'abs.py'), content: 'x' }],
      ['c4', 'read_file', { path: 'link/../../../etc/passwd' }],
    ]);
    for (const id of ['c1', 'c2', 'c3']) {
      expect(await setup.call({ toolCallId: id })).toMatchObject({ ok: false });
    }
    expect(await setup.call({ toolCallId: 'c4' }, 'read_file')).toMatchObject({ ok: false });
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(path.dirname(setup.place.workTree), 'escape.py'))).toBe(false);
  });

  test('a turn this worker has no conversation for fails at once, not retried', async () => {
    const setup = await preparedRun();
    const failure = (await setup
      .call({ toolCallId: 'c1' })
      .catch((err: unknown) => err)) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'ConversationMissing', nonRetryable: true });
  });
});

describe("a turn's opening and its commit, steps of their own", () => {
  test('the opening maps the work tree at the recorded commit and commits nothing', async () => {
    const setup = await preparedRun();
    fs.mkdirSync(workFile(setup, 'helpers'));
    fs.writeFileSync(workFile(setup, 'helpers/util_mod.py'), 'def helper():\n    return 1\n');
    fs.writeFileSync(workFile(setup, 'a.py'), 'x = 1\n');
    expect(await setup.open()).toEqual({ ref: coderOpening.ref });
    expect(setup.git('rev-parse', `refs/heads/${setup.place.branch}`)).toBe(setup.headCommit);
    const conversation = await setup.conversations.load(coderOpening.ref);
    expect(conversation).toMatchObject({ role: 'coder', workspace: setup.place.workTree });
    // The first message maps the tree, with a folder the task does not name.
    expect(JSON.stringify(conversation.entries[1])).toMatch(/Repository map[^"]*\(2 files;/);
    expect(JSON.stringify(conversation.entries[1])).toContain('helpers/ (1 file)');
    // Opened again (a retry), the conversation is kept as it was.
    fs.writeFileSync(workFile(setup, 'b.py'), 'y = 2\n');
    expect(await setup.open()).toEqual({ ref: coderOpening.ref });
    expect(await setup.conversations.load(coderOpening.ref)).toEqual(conversation);
  });

  test("a turn's commit holds what the turn changed; a retry takes the commit its first try made", async () => {
    const setup = await preparedRun();
    fs.writeFileSync(workFile(setup, 'a.py'), 'x = 1\n');
    const commit = await setup.commitTurn();
    expect(commit).toBe(setup.git('rev-parse', `refs/heads/${setup.place.branch}`));
    expect(commit).not.toBe(setup.headCommit);
    expect(setup.git('show', '--name-only', '--format=%s', commit!).split('\n')).toEqual([
      'aca: attempt 1, coder: wrote a.py',
      '',
      'a.py',
    ]);
    expect(await setup.commitTurn()).toBe(commit);
    expect(setup.git('rev-list', '--count', `refs/heads/${setup.place.branch}`)).toBe('2');
    // A turn that changed nothing commits nothing.
    expect(await setup.commitTurn({ headCommit: commit!, step: 'tester-1' })).toBeNull();
  });

  test('links the code under test planted are neither followed by the map nor committed as their targets', async () => {
    const setup = await preparedRun();
    const outside = tempDir();
    fs.writeFileSync(path.join(outside, 'secret.py'), 'def stolen_secret_token():\n    return 1\n');
    fs.symlinkSync(path.join(outside, 'secret.py'), workFile(setup, 'secret.py'));
    fs.symlinkSync(outside, workFile(setup, 'outside'));
    fs.symlinkSync('/etc/passwd', workFile(setup, 'passwd.py'));
    fs.writeFileSync(workFile(setup, 'a.py'), 'x = 1\n');
    await setup.open();
    const firstMessage = JSON.stringify((await setup.conversations.load(coderOpening.ref)).entries[1]);
    expect(firstMessage).not.toContain('stolen_secret_token');
    expect(firstMessage).not.toContain('root:');
    // Committed as links (mode 120000, the target's path as content), never the files behind them.
    const commit = (await setup.commitTurn())!;
    const tree = setup.git('ls-tree', commit);
    for (const link of ['outside', 'passwd.py', 'secret.py']) {
      expect(tree).toMatch(new RegExp(`^120000 blob [0-9a-f]+\\t${link.replace('.', '\\.')}$`, 'm'));
    }
    expect(setup.git('show', `${commit}:secret.py`)).toBe(path.join(outside, 'secret.py'));
  });
});
