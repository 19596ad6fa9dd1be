import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { executeTurnToolCall, openTurn, runAgentStep } from '../../src/agents/agent-turn';
import { FileConversationStore } from '../../src/agents/conversation-store';
import { createOpenAIChatModel } from '../../src/llm/chat-model';
import type { Scenario } from '../../src/llm/scenario';
import { ScriptedLlmServer } from '../../src/llm/scripted-server';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createAgentActivities } from '../../src/activities/agent-activities';
import { RunFiles } from '../../src/activities/run-files';

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
    const ref = await openTurn(
      store,
      coderTurn('run-1/coder-1', workspace, 'Write hello.py'),
      async () => null,
    );
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
    expect(step1.finished).toEqual({ summary: 'done' });

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
    const ref = await openTurn(
      store,
      coderTurn('run-2/coder-1', workspace, 'Write hello.py'),
      async () => null,
    );
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
      runFiles: new RunFiles(path.join(root, 'runs')),
      chatModel: createOpenAIChatModel({ baseURL: llm.url }),
      logPrompts,
    });
    const lines: string[] = [];
    const logger = new DefaultLogger('TRACE', (entry) =>
      lines.push(`${entry.message} ${JSON.stringify(entry.meta ?? {})}`),
    );
    const env = new MockActivityEnvironment({}, { logger });
    const ref = await openTurn(
      store,
      coderTurn(`run-log-${logPrompts}/coder-1`, workspace, 'Write hello.py for the secret project'),
      async () => null,
    );
    await env.run(activities.agentStep, { ref, stepIndex: 0, timeoutMs: 5000 });
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
});
