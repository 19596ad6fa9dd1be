/**
 * toolCallHere: a file tool call taken as a local activity of the worker running the workflow
 * task. It runs only where that worker has the run's files at the recorded commit and nothing of
 * the call leaves the machine; anything else is refused at once, touching nothing, and the
 * workflow sends the call to the host's queue.
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
  type OpenedTurnHere,
  type OpenTurnStepInput,
  type TurnOpening,
  type ToolCallHere,
  type ToolCallInput,
  MAX_ENTRIES_OPENED_HERE,
} from '../../../src/activities/agent-activities';
import type { ToolCallOutcome } from '../../../src/agents/agent-turn';
import type { FileToolName } from '../../../src/tools/file-tools';
import { createRepoActivities, type PreparedRun } from '../../../src/activities/repo-activities';
import { HostRuns } from '../../../src/repo';
import { FileConversationStore } from '../../../src/store/conversation-store';
import { FileReportStore } from '../../../src/store/report-store';
import { BUILTIN_PRICES } from '../../../src/llm/model-prices';
import type { RunPlace } from '../../../src/shared/run-types';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-tool-call-here-');
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
  prepared: PreparedRun;
  conversations: FileConversationStore;
  call(input: Partial<ToolCallInput> & { toolCallId: string }): Promise<ToolCallHere>;
  /** The same call as the host's queue takes it (the create_file activity). */
  onHostQueue(input: Partial<ToolCallInput> & { toolCallId: string }): Promise<ToolCallOutcome>;
  /** A turn opened where the workflow runs (openTurnHere). */
  open(input: Partial<OpenTurnStepInput>): Promise<OpenedTurnHere>;
  /** The same opening as the host's queue takes it (openTurn). */
  openOnHostQueue(input: Partial<OpenTurnStepInput>): Promise<OpenedTurn>;
}

async function preparedRun(options: { localStores?: boolean; withStore?: boolean } = {}): Promise<Setup> {
  const home = tempDir();
  if (options.withStore) execFileSync('git', ['init', '-q', '--bare', path.join(home, 'store.git')]);
  const store = options.withStore
    ? {
        url: path.join(home, 'store.git'),
        scheme: 'file' as const,
        display: path.join(home, 'store.git'),
        isDefault: false,
      }
    : null;
  const host = new HostRuns({ store, home, workspacesRoot: path.join(home, 'workspaces'), author });
  const repo = createRepoActivities({
    gitAuthor: author,
    sandboxMode: 'none',
    gitStore: store,
    host,
    localStores: options.localStores ?? true,
  });
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
  const place: RunPlace = {
    workflowId: 'wf-here',
    branch: prepared.branch,
    commit: prepared.startCommit,
    git: prepared.git,
    disk: prepared.queues.disk,
  };
  const conversations = new FileConversationStore(path.join(home, 'conversations'));
  const activities = createAgentActivities({
    store: conversations,
    reports: new FileReportStore(path.join(home, 'conversations')),
    chatModel: { complete: () => Promise.reject(new Error('no model here')) },
    recallLessons: () => Promise.resolve([]),
    logPrompts: false,
    prices: BUILTIN_PRICES,
    host,
    localStores: options.localStores ?? true,
  });
  const inputOf = (input: Partial<ToolCallInput> & { toolCallId: string }): ToolCallInput => ({
    ref: 'wf-here/run/coder-1',
    place,
    execution: 'run',
    ...input,
  });
  return {
    place,
    prepared,
    conversations,
    call: (input) => env.run(activities.toolCallHere, inputOf(input)) as Promise<ToolCallHere>,
    onHostQueue: (input) => env.run(activities.create_file, inputOf(input)) as Promise<ToolCallOutcome>,
    open: (input) =>
      env.run(activities.openTurnHere, { open: coderOpening, place, ...input }) as Promise<OpenedTurnHere>,
    openOnHostQueue: (input) =>
      env.run(activities.openTurn, { open: coderOpening, place, ...input }) as Promise<OpenedTurn>,
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
    workspace: setup.place.git.workTree,
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
        toolCalls: calls.map(([id, name]) => ({ id, name: name as FileToolName, target: '' })),
        finished: null,
        progress: true,
        usage: { prompt: 0, completion: 0 },
        note: null,
      },
    ],
  });
}

const workFile = (setup: Setup, name: string) => path.join(setup.place.git.workTree, name);

describe('a file tool call taken where the workflow runs', () => {
  test('runs on the host that has the files at the recorded commit, once per call', async () => {
    const setup = await preparedRun();
    await askedFor(setup, [['c1', 'create_file', { path: 'a.py', content: 'x = 1\n' }]]);
    const answer = await setup.call({ toolCallId: 'c1' });
    expect(answer).toEqual({ here: true, outcome: { ok: true } });
    expect(fs.readFileSync(workFile(setup, 'a.py'), 'utf8')).toBe('x = 1\n');
    expect((await setup.conversations.load('wf-here/run/coder-1')).toolResults.c1).toMatchObject({
      ok: true,
    });
    // A retry of the local activity finds the stored answer and does not write again.
    fs.writeFileSync(workFile(setup, 'a.py'), 'changed since\n');
    expect(await setup.call({ toolCallId: 'c1' })).toEqual({ here: true, outcome: { ok: true } });
    expect(fs.readFileSync(workFile(setup, 'a.py'), 'utf8')).toBe('changed since\n');
  });

  test("a call taken here and sent again to the host's queue (a crash before the marker) is answered, not run twice", async () => {
    const setup = await preparedRun();
    await askedFor(setup, [['c1', 'create_file', { path: 'a.py', content: 'x = 1\n' }]]);
    const here = await setup.call({ toolCallId: 'c1' });
    fs.writeFileSync(workFile(setup, 'a.py'), 'changed since\n');
    expect(await setup.onHostQueue({ toolCallId: 'c1' })).toEqual(here.here && here.outcome);
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
    expect(answer).toEqual({ here: true, outcome: { ok: true, ref: 'wf-here/run/coder-1' } });
    expect((await setup.conversations.load('wf-here/run/coder-1')).toolResults.c1).toMatchObject({
      ok: true,
    });
    // The earlier execution's conversation stays as it was.
    expect((await setup.conversations.load('wf-here/old/coder-1')).toolResults).toEqual({});
  });

  test('the preparing host says whether calls are to be offered at all: only without a git store or a database', async () => {
    expect((await preparedRun()).prepared.localSteps).toBe(true);
    expect((await preparedRun({ localStores: false })).prepared.localSteps).toBeUndefined();
    expect((await preparedRun({ withStore: true })).prepared.localSteps).toBeUndefined();
  });

  test.each([
    ['the run is on another disk', { disk: 'another-disk' }, "the run's files are on another host"],
    [
      'the branch is not at the recorded commit',
      { commit: '0'.repeat(40) },
      'the branch is not known to be at the recorded commit',
    ],
  ])('is refused, touching nothing, when %s', async (_what, change, why) => {
    const setup = await preparedRun();
    await askedFor(setup, [['c1', 'create_file', { path: 'a.py', content: 'x = 1\n' }]]);
    const answer = await setup.call({ toolCallId: 'c1', place: { ...setup.place, ...change } });
    expect(answer).toEqual({ here: false, why });
    expect(fs.existsSync(workFile(setup, 'a.py'))).toBe(false);
    expect((await setup.conversations.load('wf-here/run/coder-1')).toolResults).toEqual({});
  });

  test.each([
    ['conversations are in a database', { localStores: false }, 'conversations are kept in a database'],
    ['changes are pushed to a git store', { withStore: true }, 'each change is pushed to the git store'],
  ])('is refused when %s', async (_what, options, why) => {
    const setup = await preparedRun(options);
    await askedFor(setup, [['c1', 'create_file', { path: 'a.py', content: 'x = 1\n' }]]);
    expect(await setup.call({ toolCallId: 'c1' })).toEqual({ here: false, why });
    expect(fs.existsSync(workFile(setup, 'a.py'))).toBe(false);
  });

  test('a packed branch ref, which only git reads, sends the call to the host queue', async () => {
    const setup = await preparedRun();
    execFileSync('git', ['--git-dir', setup.place.git.commonDir, 'pack-refs', '--all']);
    await askedFor(setup, [['c1', 'create_file', { path: 'a.py', content: 'x = 1\n' }]]);
    expect(await setup.call({ toolCallId: 'c1' })).toEqual({
      here: false,
      why: 'the branch is not known to be at the recorded commit',
    });
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
    for (const id of ['c1', 'c2', 'c3', 'c4']) {
      const answer = await setup.call({ toolCallId: id });
      expect(answer).toMatchObject({ here: true, outcome: { ok: false } });
    }
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(fs.existsSync(path.join(path.dirname(setup.place.git.workTree), 'escape.py'))).toBe(false);
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

describe('a turn opened where the workflow runs', () => {
  const gitOf = (setup: Setup, ...args: string[]) =>
    execFileSync(
      'git',
      ['--git-dir', setup.place.git.gitDir, '--work-tree', setup.place.git.workTree, ...args],
      {
        encoding: 'utf8',
      },
    ).trim();
  const pending = { message: 'aca: attempt 1, coder: wrote a.py', step: 'commit-1', execution: 'run' };

  test("commits the turn before's work first, then opens the conversation on that commit", async () => {
    const setup = await preparedRun();
    fs.writeFileSync(workFile(setup, 'a.py'), 'x = 1\n');
    fs.mkdirSync(workFile(setup, 'helpers'));
    fs.writeFileSync(workFile(setup, 'helpers/util_mod.py'), 'def helper():\n    return 1\n');
    const answer = await setup.open({ commitFirst: pending });
    const tip = gitOf(setup, 'rev-parse', `refs/heads/${setup.place.branch}`);
    expect(answer).toEqual({ here: true, outcome: { commit: tip, ref: coderOpening.ref } });
    expect(tip).not.toBe(setup.place.commit);
    expect(gitOf(setup, 'show', '--name-only', '--format=%s', tip).split('\n')).toEqual([
      pending.message,
      '',
      'a.py',
      'helpers/util_mod.py',
    ]);
    const conversation = await setup.conversations.load(coderOpening.ref);
    expect(conversation).toMatchObject({ role: 'coder', workspace: setup.place.git.workTree });
    // The first message maps the committed tree, with a folder the task does not name.
    expect(JSON.stringify(conversation.entries[1])).toMatch(/Repository map[^"]*\(2 files;/);
    expect(JSON.stringify(conversation.entries[1])).toContain('helpers/ (1 file)');
  });

  test("an opening taken here whose marker was lost is refused when offered again; the host's queue takes its commit", async () => {
    const setup = await preparedRun();
    fs.writeFileSync(workFile(setup, 'a.py'), 'x = 1\n');
    const first = await setup.open({ commitFirst: pending });
    if (!first.here) throw new Error(first.why);
    expect(await setup.open({ commitFirst: pending })).toEqual({
      here: false,
      why: 'the branch is not known to be at the recorded commit',
    });
    expect(await setup.openOnHostQueue({ commitFirst: pending })).toEqual(first.outcome);
    expect(gitOf(setup, 'rev-list', '--count', `refs/heads/${setup.place.branch}`)).toBe('2');
  });

  test('links the code under test planted are neither followed by the map nor committed as their targets', async () => {
    const setup = await preparedRun();
    const outside = tempDir();
    fs.writeFileSync(path.join(outside, 'secret.py'), 'def stolen_secret_token():\n    return 1\n');
    fs.symlinkSync(path.join(outside, 'secret.py'), workFile(setup, 'secret.py'));
    fs.symlinkSync(outside, workFile(setup, 'outside'));
    fs.symlinkSync('/etc/passwd', workFile(setup, 'passwd.py'));
    fs.writeFileSync(workFile(setup, 'a.py'), 'x = 1\n');
    const answer = await setup.open({ commitFirst: pending });
    if (!answer.here) throw new Error(answer.why);
    const firstMessage = JSON.stringify((await setup.conversations.load(coderOpening.ref)).entries[1]);
    expect(firstMessage).not.toContain('stolen_secret_token');
    expect(firstMessage).not.toContain('root:');
    // Committed as links (mode 120000, the target's path as content), never the files behind them.
    const tree = gitOf(setup, 'ls-tree', answer.outcome.commit!);
    for (const link of ['outside', 'passwd.py', 'secret.py']) {
      expect(tree).toMatch(new RegExp(`^120000 blob [0-9a-f]+\\t${link.replace('.', '\\.')}$`, 'm'));
    }
    expect(gitOf(setup, 'show', `${answer.outcome.commit!}:secret.py`)).toBe(path.join(outside, 'secret.py'));
  });

  test.each([
    [
      'the opening recalls lessons',
      { open: { ...coderOpening, recallLessons: { workflowId: 'wf-here', task: 't' } } },
      'recalling lessons may wait seconds on the failure memory',
    ],
    ['the run is on another disk', {}, "the run's files are on another host"],
  ])('is refused, touching nothing, when %s', async (what, input, why) => {
    const setup = await preparedRun();
    fs.writeFileSync(workFile(setup, 'a.py'), 'x = 1\n');
    const place = what.includes('disk') ? { place: { ...setup.place, disk: 'another-disk' } } : {};
    expect(await setup.open({ commitFirst: pending, ...input, ...place })).toEqual({ here: false, why });
    expect(gitOf(setup, 'rev-parse', `refs/heads/${setup.place.branch}`)).toBe(setup.place.commit);
    expect(await setup.conversations.exists(coderOpening.ref)).toBe(false);
  });

  test("is refused for a work tree of more than a hundred entries, untracked ones too (a test run's flood)", async () => {
    const setup = await preparedRun();
    const folder = workFile(setup, 'flood');
    fs.mkdirSync(folder);
    for (let i = 0; i < MAX_ENTRIES_OPENED_HERE; i++) fs.writeFileSync(path.join(folder, `f${i}`), '');
    // Nothing of it is tracked: git's index is as small as it was.
    expect(gitOf(setup, 'ls-files')).toBe('');
    expect(await setup.open({ commitFirst: pending })).toEqual({
      here: false,
      why: 'the work tree is large',
    });
    expect(await setup.conversations.exists(coderOpening.ref)).toBe(false);
    expect(gitOf(setup, 'rev-parse', `refs/heads/${setup.place.branch}`)).toBe(setup.place.commit);
    // One entry fewer and it is small enough.
    fs.rmSync(path.join(folder, 'f0'));
    expect(await setup.open({ commitFirst: pending })).toMatchObject({ here: true });
  }, 30_000);
});
