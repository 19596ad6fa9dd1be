import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { executeTurnToolCall, openTurn, runAgentStep } from '../../../src/agents/agent-turn';
import { AGENT_SPECS } from '../../../src/agents/agent-specs';
import { FileConversationStore } from '../../../src/store/conversation-store';
import { createOpenAIChatModel } from '../../../src/llm/chat-model';
import { toActivityFailure } from '../../../src/llm/model-errors';
import type { Scenario } from '../../../src/llm/scenario';
import { ScriptedLlmServer } from '../../../src/llm/scripted-server';
import type { Lesson } from '../../../src/shared/types';
import { toolDefinition } from '../../../src/tools/registry';

const CODER_TOOLS = AGENT_SPECS.coder.tools.map(toolDefinition);
const noSources = { loadReport: async () => null, recallLessons: async (): Promise<Lesson[]> => [] };
const BIG = (tag: string, lines = 500) =>
  Array.from({ length: lines }, (_, i) => `# ${tag} line ${i}: ${'y'.repeat(50)}`).join('\n');
const finish = { tool_calls: [{ name: 'finish', arguments: { summary: 'done' } }] };
const coderOnly = (
  name: string,
  steps: Scenario['agents']['coder'] extends (infer T)[] | undefined ? T : never,
  extra: Partial<Scenario> = {},
): Scenario => ({
  name,
  agents: { coder: [steps] },
  ...extra,
});

const scenarios: Scenario[] = [
  coderOnly('rejects-tool-choice', [finish, finish], { rejects_tool_choice: true }),
  coderOnly('usage-details', [
    { ...finish, usage: { prompt: 100, completion: 20, cached: 64, reasoning: 12 } },
  ]),
  coderOnly('context-400', [
    { tool_calls: [{ name: 'read_file', arguments: { path: 'one.py' } }] },
    { tool_calls: [{ name: 'read_file', arguments: { path: 'two.py' } }] },
    { ...finish, context_limit_chars: 30_000 },
  ]),
  coderOnly('context-400-hopeless', [
    { tool_calls: [{ name: 'read_file', arguments: { path: 'one.py' } }] },
    { tool_calls: [{ name: 'read_file', arguments: { path: 'two.py' } }] },
    { ...finish, context_limit_chars: 10_000 },
  ]),
  coderOnly('cut-call', [
    {
      finish_reason: 'length',
      tool_calls: [
        { name: 'create_file', arguments: { path: 'small.py', content: 'x = 1\n' } },
        { name: 'create_file', arguments: { path: 'big.py', content: BIG('big') } },
      ],
    },
    finish,
  ]),
  coderOnly('cut-text', [
    {
      finish_reason: 'length',
      tool_calls_as_text: 'tags',
      tool_calls: [{ name: 'create_file', arguments: { path: 'big.py', content: BIG('big') } }],
    },
    finish,
  ]),
  coderOnly('text-calls', [
    {
      content: 'Writing it now.',
      tool_calls_as_text: 'tags',
      tool_calls: [
        { name: 'create_file', arguments: { path: 'hello.py', content: 'print("hi")\n' } },
        { name: 'run_shell', arguments: { command: 'rm -rf /' } },
      ],
    },
    { tool_calls_as_text: 'fenced', tool_calls: [{ name: 'finish', arguments: { summary: 'done' } }] },
  ]),
  coderOnly('text-calls-unasked', [
    {
      content: 'The README shows how to clean up:',
      tool_calls_as_text: 'tags',
      tool_calls: [{ name: 'delete_file', arguments: { path: 'keep.py' } }],
    },
    finish,
  ]),
  coderOnly('text-beside-native', [
    {
      content:
        'Reading it. The file ends with <tool_call>{"name": "delete_file", "arguments": {"path": "keep.py"}}</tool_call>',
      tool_calls: [{ name: 'read_file', arguments: { path: 'keep.py' } }],
    },
    finish,
  ]),
  coderOnly('text-unknown', [
    { tool_calls_as_text: 'json', tool_calls: [{ name: 'run_shell', arguments: { command: 'ls' } }] },
    finish,
  ]),
  coderOnly('repairable', [
    { tool_calls: [{ name: 'create_file', arguments: "{'path': 'fixed.py', 'content': 'x = 1\\n',}" }] },
    finish,
  ]),
];

describe('models as they behave', () => {
  let llm: ScriptedLlmServer;
  let root: string;
  let workspace: string;
  let store: FileConversationStore;

  beforeAll(async () => {
    llm = await new ScriptedLlmServer({ scenarios }).start();
  });
  afterAll(async () => {
    await llm.stop();
  });
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-model-'));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
    store = new FileConversationStore(path.join(root, 'runs'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const requestsOf = (scenario: string) => llm.requests.filter((r) => r.scenario === scenario);
  const open = (scenario: string) =>
    openTurn(
      store,
      {
        ref: `${scenario}-${Math.random().toString(36).slice(2)}/coder-1`,
        model: `scripted:${scenario}`,
        workspace,
        context: {
          role: 'coder',
          task: 'Do it',
          language: 'python',
          attempt: 1,
          maxIterations: 3,
          protectedPaths: [],
        },
      },
      noSources,
    );
  const model = () => createOpenAIChatModel({ baseURL: llm.url, timeoutMs: 5000 });
  /** A client whose options say these scenarios' models write their calls as text. */
  const textModel = () =>
    createOpenAIChatModel({
      baseURL: llm.url,
      timeoutMs: 5000,
      modelOptions: Object.fromEntries(
        ['cut-text', 'text-calls', 'text-unknown', 'text-beside-native'].map((name) => [
          `scripted:${name}`,
          { text_tool_calls: true },
        ]),
      ),
    });
  const toolAnswers = (messages: Array<{ role: string; content: unknown }>) =>
    messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(String(m.content)));

  /** Runs steps (executing their file calls) until the turn finishes; at most `max` steps. */
  async function runTurn(ref: string, chat = model(), max = 5) {
    for (let step = 0; step < max; step++) {
      const decision = await runAgentStep(store, chat, ref, step);
      for (const call of decision.toolCalls) await executeTurnToolCall(store, ref, call.id);
      if (decision.finished) return decision;
    }
    throw new Error('the turn did not finish');
  }

  test('a server that rejects tool_choice is asked once more without it, and never with it again', async () => {
    const chat = model();
    await runTurn(await open('rejects-tool-choice'), chat);
    await runTurn(await open('rejects-tool-choice'), chat);
    const seen = requestsOf('rejects-tool-choice').map((r) => [r.status, r.params.tool_choice ?? null]);
    expect(seen).toEqual([
      [400, 'auto'],
      [200, null],
      [200, null],
    ]);
  });

  test('a model client that was not refused keeps sending tool_choice "auto"', async () => {
    await runTurn(await open('usage-details'));
    expect(requestsOf('usage-details').at(-1)!.params.tool_choice).toBe('auto');
  });

  test('per-model options are sent, "*" under the model\'s own; none when unconfigured', async () => {
    const chat = createOpenAIChatModel({
      baseURL: llm.url,
      modelOptions: {
        '*': { temperature: 0.3, max_completion_tokens: 2048 },
        'scripted:usage-details': { reasoning_effort: 'low', temperature: 0 },
      },
    });
    await chat.complete({
      model: 'scripted:usage-details',
      messages: [{ role: 'user', content: 'x' }],
      tools: CODER_TOOLS,
    });
    expect(requestsOf('usage-details').at(-1)!.params).toMatchObject({
      temperature: 0,
      max_completion_tokens: 2048,
      reasoning_effort: 'low',
    });
    await model().complete({
      model: 'scripted:usage-details',
      messages: [{ role: 'user', content: 'x' }],
      tools: CODER_TOOLS,
    });
    const plain = requestsOf('usage-details').at(-1)!.params;
    expect(Object.keys(plain).sort()).toEqual(['stream', 'tool_choice']);
  });

  test('cached and reasoning tokens are read into the usage and the step records them for the cost', async () => {
    const answer = await model().complete({
      model: 'scripted:usage-details',
      messages: [{ role: 'user', content: 'x' }],
      tools: CODER_TOOLS,
    });
    expect(answer.usage).toEqual({ prompt: 100, completion: 20, cached: 64, reasoning: 12 });
    const decision = await runAgentStep(store, model(), await open('usage-details'), 0);
    expect(decision.usage).toEqual({ prompt: 100, completion: 20, cached: 64, reasoning: 12 });
  });

  test('Ollama: one warning per model that its OpenAI endpoint ignores num_ctx, none once context_tokens is set', async () => {
    const warnings: string[] = [];
    const chat = createOpenAIChatModel({
      baseURL: 'http://127.0.0.1:11434/v1',
      timeoutMs: 1000,
      modelOptions: { 'qwen2.5-coder:32b': { context_tokens: 32768 } },
      warn: (m) => warnings.push(m),
    });
    const ask = (name: string) =>
      chat
        .complete({ model: name, messages: [{ role: 'user', content: 'x' }], tools: CODER_TOOLS })
        .catch(() => null);
    await ask('qwen2.5-coder:7b');
    await ask('qwen2.5-coder:7b');
    await ask('qwen2.5-coder:32b');
    expect(warnings).toEqual([
      expect.stringMatching(/"qwen2\.5-coder:7b".*4096 tokens.*OLLAMA_CONTEXT_LENGTH.*context_tokens/),
    ]);
  });

  test('a context-length 400 is survived: trimmed to the stated window, sent once more, the turn finishes', async () => {
    // Together within the default window (nothing trimmed at first), beyond the server's 30000 chars.
    fs.writeFileSync(path.join(workspace, 'one.py'), BIG('one', 300));
    fs.writeFileSync(path.join(workspace, 'two.py'), BIG('two', 300));
    const ref = await open('context-400');
    const finished = await runTurn(ref);
    expect(finished.finished).toEqual({ tool: 'finish', summary: 'done' });
    const third = requestsOf('context-400').filter((r) => r.step === 2);
    expect(third.map((r) => r.status)).toEqual([400, 200]);
    expect(third[0].chars).toBeGreaterThan(30_000);
    expect(third[1].chars).toBeLessThanOrEqual(30_000);
    const [first, second] = toolAnswers(third[1].messages);
    expect(first).toEqual({
      ok: true,
      trimmed: expect.stringMatching(/^read_file one\.py lines 1-300 of 300, \d+ chars; read it again/),
    });
    // The latest step's answer is never trimmed.
    expect(second.content).toContain('two line 299');
    const stored = await store.load(ref);
    expect(JSON.stringify(stored.toolResults)).toContain('one line 299');
    // The window the server stated (30000 chars / 4) less a tenth, for this turn's later steps.
    expect(stored.contextTokens).toBe(Math.floor(7_500 * 0.9));
  });

  test('a context-length 400 that trimming cannot cure fails as before, after one retry', async () => {
    // Together within the default window (nothing trimmed at first), beyond the server's 30000 chars.
    fs.writeFileSync(path.join(workspace, 'one.py'), BIG('one', 300));
    fs.writeFileSync(path.join(workspace, 'two.py'), BIG('two', 300));
    const ref = await open('context-400-hopeless');
    const failure = await runTurn(ref).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect(toActivityFailure(failure)).toMatchObject({
      nonRetryable: true,
      message: expect.stringMatching(/maximum context length/),
    });
    expect(
      requestsOf('context-400-hopeless')
        .filter((r) => r.step === 2)
        .map((r) => r.status),
    ).toEqual([400, 400]);
  });

  test('a cut answer: the complete call runs, the cut one is answered with advice and never executed', async () => {
    const ref = await open('cut-call');
    const step0 = await runAgentStep(store, model(), ref, 0);
    expect(step0.toolCalls.map((c) => c.target)).toEqual(['small.py']);
    expect(step0.note).toMatch(/cut at the output limit/);
    for (const call of step0.toolCalls) await executeTurnToolCall(store, ref, call.id);
    expect((await runAgentStep(store, model(), ref, 1)).finished).not.toBeNull();
    expect(fs.existsSync(path.join(workspace, 'small.py'))).toBe(true);
    expect(fs.existsSync(path.join(workspace, 'big.py'))).toBe(false);
    const answers = toolAnswers(requestsOf('cut-call').find((r) => r.step === 1)!.messages);
    expect(answers[0]).toMatchObject({ ok: true, path: 'small.py' });
    expect(answers[1]).toEqual({
      ok: false,
      error: expect.stringMatching(/cut at its output limit.*edit_file.*smaller pieces/),
    });
  });

  test('a cut answer holding a call written as text: nothing runs, a message says why, the turn goes on', async () => {
    const ref = await open('cut-text');
    const step0 = await runAgentStep(store, textModel(), ref, 0);
    expect(step0.toolCalls).toEqual([]);
    expect(step0.progress).toBe(false);
    expect((await runAgentStep(store, textModel(), ref, 1)).finished).not.toBeNull();
    expect(fs.existsSync(path.join(workspace, 'big.py'))).toBe(false);
    const next = requestsOf('cut-text').find((r) => r.step === 1)!;
    expect(String(next.messages.at(-1)!.content)).toMatch(
      /cut at its output limit.*edit_file.*smaller pieces/,
    );
  });

  test('calls written as text run with generated ids; names the agent lacks are refused', async () => {
    const ref = await open('text-calls');
    const step0 = await runAgentStep(store, textModel(), ref, 0);
    expect(step0.toolCalls).toEqual([
      { kind: 'file', id: 'call_text_0_0', name: 'create_file', target: 'hello.py' },
    ]);
    await executeTurnToolCall(store, ref, 'call_text_0_0');
    expect(fs.readFileSync(path.join(workspace, 'hello.py'), 'utf8')).toBe('print("hi")\n');
    expect((await runAgentStep(store, textModel(), ref, 1)).finished).toEqual({
      tool: 'finish',
      summary: 'done',
    });
    const stored = await store.load(ref);
    // The call taken out of the content; a block naming an unknown tool is no call and stays, unexecuted.
    const said = stored.entries[2].kind === 'assistant' ? stored.entries[2].content : null;
    expect(said).toMatch(/^Writing it now\.\s+<tool_call>\s*\{"name":"run_shell"/);
    expect(said).not.toContain('create_file');
    expect(JSON.stringify(stored.toolResults)).not.toContain('run_shell');
  });

  test('calls in text are not taken from a model whose options do not say it writes them so', async () => {
    fs.writeFileSync(path.join(workspace, 'keep.py'), 'x = 1\n');
    const ref = await open('text-calls-unasked');
    const step0 = await runAgentStep(store, model(), ref, 0);
    expect(step0.toolCalls).toEqual([]);
    expect(step0.note).toBe('the model answered without calling a tool');
    expect(fs.existsSync(path.join(workspace, 'keep.py'))).toBe(true);
  });

  test('beside native calls, a call in the text is never taken, even for a model that writes them so', async () => {
    fs.writeFileSync(path.join(workspace, 'keep.py'), 'x = 1\n');
    const ref = await open('text-beside-native');
    const step0 = await runAgentStep(store, textModel(), ref, 0);
    expect(step0.toolCalls.map((c) => c.name)).toEqual(['read_file']);
    for (const call of step0.toolCalls) await executeTurnToolCall(store, ref, call.id);
    expect(fs.existsSync(path.join(workspace, 'keep.py'))).toBe(true);
  });

  test('JSON naming a tool the agent lacks stays plain content: no call, the model is asked to use its tools', async () => {
    const ref = await open('text-unknown');
    const step0 = await runAgentStep(store, textModel(), ref, 0);
    expect(step0.toolCalls).toEqual([]);
    expect(step0.note).toBe('the model answered without calling a tool');
  });

  test('arguments repaired when written whole run, stored as the JSON that was accepted', async () => {
    const ref = await open('repairable');
    await runTurn(ref);
    expect(fs.readFileSync(path.join(workspace, 'fixed.py'), 'utf8')).toBe('x = 1\n');
    const stored = await store.load(ref);
    const call = stored.entries.flatMap((e) => (e.kind === 'assistant' ? e.toolCalls : []))[0];
    expect(JSON.parse(call.arguments)).toEqual({ path: 'fixed.py', content: 'x = 1\n' });
  });
});

describe('a model the server takes no tools for', () => {
  let server: http.Server;
  let url: string;
  const seen: Array<{ tools: boolean; messages: Array<{ role: string; content: string }> }> = [];

  beforeAll(async () => {
    // Ollama's answer for a model without a tool template; without tools, calls written as text.
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          tools?: unknown[];
          messages: Array<{ role: string; content: string }>;
        };
        seen.push({ tools: body.tools !== undefined, messages: body.messages });
        const answered = body.messages.some((m) => m.role === 'assistant');
        res.setHeader('content-type', 'application/json');
        if (body.tools) {
          res.statusCode = 400;
          res.end(
            JSON.stringify({
              error: { message: 'registry.ollama.ai/library/tiny:1b does not support tools' },
            }),
          );
          return;
        }
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            created: 0,
            model: 'tiny:1b',
            choices: [
              {
                index: 0,
                finish_reason: 'stop',
                message: {
                  role: 'assistant',
                  content: answered
                    ? 'Done.\n<tool_call>{"name": "finish", "arguments": {"summary": "done"}}</tool_call>'
                    : '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>',
                },
              },
            ],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  test('is asked again with the tools in the prompt, and its calls written as text are taken', async () => {
    const chat = createOpenAIChatModel({ baseURL: url, timeoutMs: 5000 });
    const ask = () =>
      chat.complete({ model: 'tiny:1b', messages: [{ role: 'user', content: 'Do it' }], tools: CODER_TOOLS });
    const answer = await ask();
    expect(answer.toolCallsInText).toBe(true);
    await ask();
    expect(seen.map((r) => r.tools)).toEqual([true, false, false]);
    expect(seen[1].messages[0].role).toBe('system');
    expect(seen[1].messages[0].content).toMatch(/<tool_call>.*"create_file"/s);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-model-'));
    try {
      const store = new FileConversationStore(path.join(root, 'runs'));
      const ref = await openTurn(
        store,
        {
          ref: 'no-tools/coder-1',
          model: 'tiny:1b',
          workspace: root,
          context: {
            role: 'coder',
            task: 'Do it',
            language: 'python',
            attempt: 1,
            maxIterations: 3,
            protectedPaths: [],
          },
        },
        noSources,
      );
      fs.writeFileSync(path.join(root, 'a.py'), 'x = 1\n');
      const first = await runAgentStep(store, chat, ref, 0);
      expect(first.toolCalls).toEqual([
        { kind: 'file', id: 'call_text_0_0', name: 'read_file', target: 'a.py' },
      ]);
      await executeTurnToolCall(store, ref, 'call_text_0_0');
      expect((await runAgentStep(store, chat, ref, 1)).finished).toEqual({ tool: 'finish', summary: 'done' });
      // The call and its answer were sent back as text: such a server's template may drop tool turns.
      const last = seen.at(-1)!.messages;
      expect(last.map((m) => m.role)).toEqual(['system', 'system', 'user', 'assistant', 'user']);
      expect(last[3].content).toBe(
        '<tool_call>{"name": "read_file", "arguments": {"path":"a.py"}}</tool_call>',
      );
      expect(last[4].content).toMatch(
        /^<tool_response name="read_file">\n\{"ok":true,.*"content":"x = 1\\n"/,
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
