import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { executeTurnToolCall, openTurn, runAgentStep } from '../../../src/agents/agent-turn';
import { FileConversationStore } from '../../../src/store/conversation-store';
import { createOpenAIChatModel } from '../../../src/llm/chat-model';
import type { Scenario } from '../../../src/llm/scenario';
import { ScriptedLlmServer } from '../../../src/llm/scripted-server';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createAgentActivities } from '../../../src/activities/agent-activities';
import { BUILTIN_PRICES } from '../../../src/llm/model-prices';
import { FileReportStore } from '../../../src/store/report-store';
import { createLessonRecall } from '../../../src/activities/memory-activities';
import type { FailureMemory } from '../../../src/memory/failure-repository';
import { MemoryUnavailableError } from '../../../src/memory/memory-errors';
import type { Lesson } from '../../../src/shared/types';

const noSources = { loadReport: async () => null, recallLessons: async (): Promise<Lesson[]> => [] };

/** Opening of a first Coder turn against the hostile scenario. */
function coderTurn(ref: string, workspace: string, task: string) {
  return {
    ref,
    model: 'scripted:hostile-coder',
    workspace,
    context: {
      role: 'coder' as const,
      task,
      language: 'python' as const,
      attempt: 1,
      maxIterations: 3,
      protectedPaths: [],
    },
  };
}

const hostile: Scenario = {
  name: 'hostile-coder',
  task: 'Write hello.py',
  agents: {
    coder: [
      [
        {
          tool_calls: [
            { name: 'create_file', arguments: '{"path": "a.py", "content": ' },
            { name: 'rm_rf', arguments: { path: '/' } },
            { name: 'create_file', arguments: { path: 'b.py' } },
            { name: 'create_file', arguments: { path: '../escape.py', content: 'x' } },
            { name: 'create_file', arguments: { path: '/tmp/abs.py', content: 'x' } },
            { name: 'create_file', arguments: { path: 'hello.py', content: 'print("hi")\n' } },
          ],
        },
        { tool_calls: [{ name: 'finish', arguments: { summary: 'done' } }] },
      ],
    ],
  },
};

describe('an agent turn against the scripted model', () => {
  let llm: ScriptedLlmServer;
  let root: string;
  let workspace: string;

  beforeAll(async () => {
    llm = await new ScriptedLlmServer({ scenarios: [hostile] }).start();
  });
  afterAll(async () => {
    await llm.stop();
  });
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-turn-'));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('bad tool calls are answered with ok:false and never executed; good ones run', async () => {
    const store = new FileConversationStore(path.join(root, 'runs'));
    const model = createOpenAIChatModel({ baseURL: llm.url, timeoutMs: 5000 });
    const ref = await openTurn(store, coderTurn('run-1/coder-1', workspace, 'Write hello.py'), noSources);
    const step0 = await runAgentStep(store, model, ref, 0);
    // Invalid JSON, unknown tool and schema failure are answered at once; the path checks need the file system.
    expect(step0.toolCalls.map((c) => c.target)).toEqual(['../escape.py', '/tmp/abs.py', 'hello.py']);
    const outcomes = [];
    for (const call of step0.toolCalls) outcomes.push(await executeTurnToolCall(store, ref, call.id));
    expect(outcomes.map((o) => o.ok)).toEqual([false, false, true]);
    expect(fs.existsSync(path.join(root, 'escape.py'))).toBe(false);
    expect(fs.existsSync('/tmp/abs.py')).toBe(false);
    expect(fs.readFileSync(path.join(workspace, 'hello.py'), 'utf8')).toBe('print("hi")\n');

    const step1 = await runAgentStep(store, model, ref, 1);
    expect(step1.finished).toEqual({ tool: 'finish', summary: 'done' });

    // The model saw an answer for every call, in order, each ok:false with a reason or ok:true.
    const secondRequest = llm.requests.filter((r) => r.scenario === 'hostile-coder')[1];
    const toolAnswers = secondRequest.messages
      .filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(String(m.content)));
    expect(toolAnswers).toHaveLength(6);
    expect(toolAnswers[0]).toMatchObject({ ok: false, error: expect.stringMatching(/not valid JSON/) });
    expect(toolAnswers[1]).toMatchObject({ ok: false, error: expect.stringMatching(/unknown tool "rm_rf"/) });
    expect(toolAnswers[2]).toMatchObject({ ok: false, error: expect.stringMatching(/content/) });
    expect(toolAnswers[3]).toMatchObject({ ok: false, error: expect.stringMatching(/inside the workspace/) });
    expect(toolAnswers[4]).toMatchObject({ ok: false, error: expect.stringMatching(/absolute/) });
    expect(toolAnswers[5]).toMatchObject({ ok: true, path: 'hello.py' });
  });

  test('a retried step returns the stored decision without calling the model again', async () => {
    const store = new FileConversationStore(path.join(root, 'runs'));
    const model = createOpenAIChatModel({ baseURL: llm.url, timeoutMs: 5000 });
    const ref = await openTurn(store, coderTurn('run-2/coder-1', workspace, 'Write hello.py'), noSources);
    const before = llm.requests.length;
    const first = await runAgentStep(store, model, ref, 0);
    const again = await runAgentStep(store, model, ref, 0);
    expect(again).toEqual(first);
    expect(llm.requests.length).toBe(before + 1);
  });

  test.each([
    [false, 'keeps the task and file contents out of the log'],
    [true, 'logs the conversation when ACA_LOG_PROMPTS asks for it'],
  ])('the agentStep activity with logPrompts=%s %s', async (logPrompts) => {
    const store = new FileConversationStore(path.join(root, 'runs'));
    const activities = createAgentActivities({
      store,
      reports: new FileReportStore(path.join(root, 'runs')),
      chatModel: createOpenAIChatModel({ baseURL: llm.url }),
      recallLessons: noSources.recallLessons,
      logPrompts,
      prices: BUILTIN_PRICES,
    });
    const lines: string[] = [];
    const logger = new DefaultLogger('TRACE', (entry) =>
      lines.push(`${entry.message} ${JSON.stringify(entry.meta ?? {})}`),
    );
    const env = new MockActivityEnvironment({}, { logger });
    const ref = await openTurn(
      store,
      coderTurn(`run-log-${logPrompts}/coder-1`, workspace, 'Write hello.py for the secret project'),
      noSources,
    );
    await env.run(activities.agentStep, { ref, model: 'scripted:any', stepIndex: 0, timeoutMs: 5000 });
    const log = lines.join('\n');
    expect(log).toMatch(/model step .*"toolCalls":\["create_file","create_file","create_file"\]/);
    if (logPrompts) {
      expect(log).toContain('secret project');
      expect(log).toContain('print(');
    } else {
      expect(log).not.toContain('secret project');
      expect(log).not.toContain('print(');
    }
  });

  test('a step whose conversation this worker does not have fails at once, not retried, saying why', async () => {
    const activities = createAgentActivities({
      store: new FileConversationStore(path.join(root, 'runs')),
      reports: new FileReportStore(path.join(root, 'runs')),
      chatModel: createOpenAIChatModel({ baseURL: llm.url }),
      recallLessons: noSources.recallLessons,
      logPrompts: false,
      prices: BUILTIN_PRICES,
    });
    const env = new MockActivityEnvironment();
    const asked = llm.requests.length;
    const failure = (await env
      .run(activities.agentStep, {
        ref: 'elsewhere/run-1/coder-1',
        model: 'scripted:any',
        stepIndex: 0,
        timeoutMs: 5000,
      })
      .catch((err: unknown) => err)) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'ConversationMissing', nonRetryable: true });
    expect(failure.message).toMatch(
      /no conversation is stored under "elsewhere\/run-1\/coder-1" on this worker: .*DATABASE_URL/,
    );
    expect(llm.requests.length).toBe(asked);
  });

  test("a Planner's turn opens with the lessons recalled once, in its first message", async () => {
    const store = new FileConversationStore(path.join(root, 'runs'));
    const lesson: Lesson = {
      task: 'Implement parse_csv',
      rootCause: 'quoted commas split fields',
      fixHypothesis: 'use a state machine over the characters',
      fix: 'Attempt 2 passed after: a state machine',
      similarity: 0.8,
    };
    const queries: unknown[] = [];
    const sources = {
      loadReport: async () => null,
      recallLessons: async (query: unknown) => {
        queries.push(query);
        return [lesson];
      },
    };
    const opening = {
      ...coderTurn('run-3/planner', workspace, 'Implement parse_tsv'),
      context: { ...coderTurn('', workspace, 'Implement parse_tsv').context, role: 'planner' as const },
      recallLessons: { workflowId: 'run-3', task: 'Implement parse_tsv' },
    };
    await openTurn(store, opening, sources);
    // A retried opening step finds the conversation and does not look the lessons up again.
    await openTurn(store, opening, sources);
    expect(queries).toEqual([{ workflowId: 'run-3', task: 'Implement parse_tsv' }]);
    const first = (await store.load('run-3/planner')).entries[1];
    expect(first.kind).toBe('user');
    expect(first.kind === 'user' && first.content).toContain('quoted commas split fields');
    expect(first.kind === 'user' && first.content).toContain('Implement parse_tsv');
  });
});

describe('recalling lessons for the Planner', () => {
  const lesson: Lesson = { task: 't', rootCause: 'r', fixHypothesis: 'f', fix: null, similarity: 0.5 };
  const memoryAnswering = (answer: () => Promise<Lesson[]>) =>
    ({ findSimilarFailures: answer }) as unknown as FailureMemory;

  test('waits out a short outage and then answers', async () => {
    let calls = 0;
    const recall = createLessonRecall(
      {
        memory: async () =>
          memoryAnswering(async () => {
            calls += 1;
            if (calls < 3) throw new MemoryUnavailableError('connection refused', 'ECONNREFUSED');
            return [lesson];
          }),
      },
      10_000,
    );
    await expect(recall({ workflowId: 'w', task: 't' })).resolves.toEqual([lesson]);
    expect(calls).toBe(3);
  });

  test('plans without lessons when memory stays down, hangs, or refuses, and says why', async () => {
    const warnings: string[] = [];
    const logger = new DefaultLogger('WARN', (entry) =>
      warnings.push(`${entry.message} ${JSON.stringify(entry.meta ?? {})}`),
    );
    // As inside the agentStep activity, whose logger carries the warning.
    const inActivity = (recall: ReturnType<typeof createLessonRecall>) =>
      new MockActivityEnvironment({}, { logger }).run(recall, { workflowId: 'w', task: 't' });

    const down = createLessonRecall(
      {
        memory: async () => {
          throw new MemoryUnavailableError('connection refused', 'ECONNREFUSED');
        },
      },
      1_200,
    );
    const t0 = Date.now();
    await expect(inActivity(down)).resolves.toEqual([]);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(warnings.pop()).toMatch(/planning without lessons.*connection refused/);

    const hangs = createLessonRecall(
      { memory: async () => memoryAnswering(() => new Promise(() => undefined)) },
      300,
    );
    await expect(inActivity(hangs)).resolves.toEqual([]);
    expect(warnings.pop()).toMatch(/planning without lessons.*no answer within 300 ms/);

    const refuses = createLessonRecall(
      {
        memory: async () =>
          memoryAnswering(async () => {
            throw new Error('syntax error in query');
          }),
      },
      10_000,
    );
    const t1 = Date.now();
    await expect(inActivity(refuses)).resolves.toEqual([]);
    // Not an outage: no waiting for an answer that cannot come.
    expect(Date.now() - t1).toBeLessThan(1_000);
    expect(warnings.pop()).toMatch(/planning without lessons.*syntax error in query/);
  });
});
