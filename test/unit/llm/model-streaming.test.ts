import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type OpenAI from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createAgentActivities, type AgentStepOutcome } from '../../../src/activities/agent-activities';
import { DefaultLogger } from '@temporalio/worker';
import { FileReportStore } from '../../../src/store/report-store';
import { AGENT_SPECS } from '../../../src/agents/agent-specs';
import { openTurn } from '../../../src/agents/agent-turn';
import { FileConversationStore } from '../../../src/store/conversation-store';
import { createOpenAIChatModel, type ChatAnswer } from '../../../src/llm/chat-model';
import { BUILTIN_PRICES } from '../../../src/llm/model-prices';
import type { Scenario } from '../../../src/llm/scenario';
import { ScriptedLlmServer } from '../../../src/llm/scripted-server';
import { ModelStreamIncompleteError, type StreamProgress } from '../../../src/llm/stream-answer';
import { toolDefinition } from '../../../src/tools/registry';
import type { Lesson } from '../../../src/shared/types';

const BIG = Array.from({ length: 40 }, (_, i) => `def f${i}(x):\n    return x + ${i}  # "quoted" \\ \n`).join(
  '',
);
const coderTools = AGENT_SPECS.coder.tools.map(toolDefinition);
const coderMessages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are the Coder.' },
  { role: 'user', content: 'Task: write big.py. This is coding attempt 1.' },
];

const scenario = (
  name: string,
  step: Scenario['agents']['coder'] extends (infer T)[] | undefined ? T : never,
) => ({ name, agents: { coder: [step] } }) as Scenario;

const writeBig = {
  content: 'I will write big.py and read it back.',
  tool_calls: [
    { name: 'create_file', arguments: { path: 'big.py', content: BIG } },
    { name: 'read_file', arguments: { path: 'big.py', start_line: 2, end_line: 9 } },
  ],
  usage: { prompt: 1200, completion: 340, cached: 1024, reasoning: 64 },
};

const SCENARIOS: Scenario[] = [
  scenario('stream-same', [writeBig]),
  scenario('stream-cut', [{ ...writeBig, finish_reason: 'length' }]),
  { ...scenario('stream-no-tool-choice', [writeBig]), rejects_tool_choice: true },
  // A generation of about 3 s (over 70 chunks) that never goes quiet for more than 40 ms.
  scenario('stream-slow', [{ ...writeBig, chunkDelayMs: 40 }]),
  // Three chunks, then silence with the connection open; the next request of the step is answered.
  scenario('stream-stall', [{ ...writeBig, fault: { stallAfterChunks: 3, times: 1 } }]),
];

describe('streamed answers', () => {
  let llm: ScriptedLlmServer;
  let root: string;
  beforeAll(async () => {
    llm = await new ScriptedLlmServer({ scenarios: SCENARIOS }).start();
  });
  afterAll(async () => {
    await llm.stop();
  });
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-stream-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const streaming = (extra: Record<string, unknown> = {}) =>
    createOpenAIChatModel({ baseURL: llm.url, modelOptions: { '*': { stream: true, ...extra } } });
  const whole = () => createOpenAIChatModel({ baseURL: llm.url });
  const ask = (model: ReturnType<typeof whole>, name: string, onChunk?: (p: StreamProgress) => void) =>
    model.complete({ model: `scripted:${name}`, messages: coderMessages, tools: coderTools, onChunk });

  test('a streamed answer is the same answer as a non-streaming one, assembled from its chunks', async () => {
    const progress: StreamProgress[] = [];
    const streamed = await ask(streaming(), 'stream-same', (p) => progress.push({ ...p }));
    const plain = await ask(whole(), 'stream-same');
    expect(streamed).toEqual(plain);
    expect(streamed.toolCalls.map((c) => JSON.parse(c.arguments))).toEqual(
      writeBig.tool_calls.map((c) => c.arguments),
    );
    expect(streamed.finishReason).toBe('tool_calls');
    expect(streamed.usage).toEqual({ prompt: 1200, completion: 340, cached: 1024, reasoning: 64 });
    // The create_file arguments alone span dozens of chunks.
    expect(progress.length).toBeGreaterThan(40);
    expect(progress.at(-1)!.chars).toBe(
      writeBig.content.length + streamed.toolCalls.reduce((n, c) => n + c.arguments.length, 0),
    );
    const [sent, unstreamed] = llm.requests.filter((r) => r.scenario === 'stream-same');
    expect(sent.params).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(unstreamed.params.stream).toBe(false);
  });

  test('a cut stream keeps finish_reason "length" and its cut arguments, for the turn to refuse', async () => {
    const answer: ChatAnswer = await ask(streaming(), 'stream-cut');
    expect(answer.finishReason).toBe('length');
    expect(() => JSON.parse(answer.toolCalls[1].arguments)).toThrow();
    expect(answer).toEqual(await ask(whole(), 'stream-cut'));
  });

  test('a server refusing tool_choice is asked once more without it, streaming', async () => {
    const model = streaming();
    const answer = await ask(model, 'stream-no-tool-choice');
    expect(answer.toolCalls).toHaveLength(2);
    await ask(model, 'stream-no-tool-choice');
    const sent = llm.requests.filter((r) => r.scenario === 'stream-no-tool-choice');
    expect(sent.map((r) => [r.status, r.params.tool_choice])).toEqual([
      [400, 'auto'],
      [200, undefined],
      [200, undefined],
    ]);
  });

  describe('servers that stream otherwise', () => {
    let server: http.Server;
    let url: string;
    let events: string[];
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(events.map((e) => `data: ${e}\n\n`).join(''));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const chunk = (delta: object, finish: string | null = null) =>
      JSON.stringify({
        id: 'x',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [{ index: 0, delta, finish_reason: finish }],
      });

    test('no usage sent (include_usage ignored): the step counts 0 tokens', async () => {
      events = [chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop'), '[DONE]'];
      const model = createOpenAIChatModel({ baseURL: url, modelOptions: { m: { stream: true } } });
      expect(await model.complete({ model: 'm', messages: coderMessages, tools: coderTools })).toEqual({
        content: 'Hi',
        toolCalls: [],
        finishReason: 'stop',
        usage: { prompt: 0, completion: 0 },
      });
    });

    test('a stream that ends without a finish_reason is a failed step, not a cut answer', async () => {
      events = [
        chunk({
          role: 'assistant',
          tool_calls: [
            {
              index: 0,
              id: 'c1',
              type: 'function',
              function: { name: 'create_file', arguments: '{"path": "a.py", "con' },
            },
          ],
        }),
        '[DONE]',
      ];
      const model = createOpenAIChatModel({ baseURL: url, modelOptions: { m: { stream: true } } });
      await expect(
        model.complete({ model: 'm', messages: coderMessages, tools: coderTools }),
      ).rejects.toThrow(ModelStreamIncompleteError);
    });
  });

  describe('the agentStep activity', () => {
    const setUp = async (name: string, idleSeconds?: number) => {
      const store = new FileConversationStore(path.join(root, 'runs'));
      const workspace = path.join(root, 'ws');
      fs.mkdirSync(workspace, { recursive: true });
      const activities = createAgentActivities({
        store,
        reports: new FileReportStore(path.join(root, 'runs')),
        chatModel: streaming(idleSeconds !== undefined ? { stream_idle_seconds: idleSeconds } : {}),
        recallLessons: async (): Promise<Lesson[]> => [],
        logPrompts: false,
        prices: BUILTIN_PRICES,
      });
      const ref = await openTurn(
        store,
        {
          ref: `${name}/coder-1`,
          model: `scripted:${name}`,
          workspace,
          context: {
            role: 'coder',
            task: 'Write big.py',
            language: 'python',
            attempt: 1,
            maxIterations: 3,
            protectedPaths: [],
          },
        },
        { loadReport: async () => null, recallLessons: async () => [] },
      );
      const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('WARN') });
      const beats: Array<{ at: number; details: unknown }> = [];
      const started = performance.now();
      env.on('heartbeat', (details: unknown) => beats.push({ at: performance.now() - started, details }));
      const step = async () =>
        (await env.run(activities.agentStep, {
          ref,
          model: `scripted:${name}`,
          stepIndex: 0,
          timeoutMs: 10_000,
        })) as AgentStepOutcome;
      return { store, ref, beats, step, started };
    };

    test('heartbeats as the chunks of a long generation arrive, carrying how far it has come', async () => {
      const { beats, step, started } = await setUp('stream-slow');
      const outcome = await step();
      const took = performance.now() - started;
      expect(outcome.toolCalls.map((c) => c.name)).toEqual(['create_file', 'read_file']);
      expect(took).toBeGreaterThan(2500);
      // Chunk beats, about one a second, each further on (the 5 s timer has not beaten yet).
      const streamed = beats.flatMap((b) => {
        const details = b.details as { streamed?: StreamProgress } | undefined;
        return details?.streamed ? [{ at: b.at, ...details.streamed }] : [];
      });
      expect(streamed.length).toBeGreaterThanOrEqual(Math.floor(took / 1000) - 1);
      expect(streamed[0].at).toBeLessThan(1000);
      const chunks = streamed.map((s) => s.chunks);
      expect(chunks).toEqual([...chunks].sort((a, b) => a - b));
      expect(new Set(chunks).size).toBe(chunks.length);
    });

    test('a stream gone silent is aborted after stream_idle_seconds as a retryable timeout; the retry stores the step', async () => {
      const { store, ref, step, started } = await setUp('stream-stall', 1);
      const failure = await step().catch((err: unknown) => err);
      const took = performance.now() - started;
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: 'ModelTimeout', nonRetryable: false });
      expect((failure as Error).message).toMatch(/sent nothing for 1 s/);
      expect(took).toBeGreaterThanOrEqual(1000);
      expect(took).toBeLessThan(4000);
      // Nothing of the cut stream was kept.
      expect((await store.load(ref)).steps).toHaveLength(0);
      const outcome = await step();
      expect(outcome.toolCalls.map((c) => c.name)).toEqual(['create_file', 'read_file']);
      expect((await store.load(ref)).steps).toHaveLength(1);
      const sent = llm.requests.filter((r) => r.scenario === 'stream-stall');
      expect(sent.map((r) => r.status)).toEqual(['dropped', 200]);
    });
  });
});
