/**
 * The calls a model's answer may make are the model's to word, ids and count included: a call
 * that reuses an id of an earlier answer is still its own call, executed and answered on its own,
 * and only so many calls of one answer are executed.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  executeTurnToolCall,
  MAX_CALLS_PER_ANSWER,
  openTurn,
  runAgentStep,
  toChatMessages,
} from '../../../src/agents/agent-turn';
import type { ChatAnswer, ChatModel } from '../../../src/llm/chat-model';
import { FileConversationStore } from '../../../src/store/conversation-store';
import type { Lesson } from '../../../src/shared/types';

const sources = { loadReport: async () => null, recallLessons: async (): Promise<Lesson[]> => [] };

type Call = ChatAnswer['toolCalls'][number];

/** A model that answers each request with the next of `answers`, as given. */
function scriptedModel(answers: Call[][]): ChatModel {
  let next = 0;
  return {
    complete: async () => ({
      content: null,
      toolCalls: answers[next++] ?? [],
      finishReason: 'tool_calls',
      usage: { prompt: 1, completion: 1 },
    }),
  };
}

const create = (id: string, file: string): Call => ({
  id,
  name: 'create_file',
  arguments: JSON.stringify({ path: file, content: `${file}\n` }),
});

describe("the calls of a model's answer", () => {
  let root: string;
  let workspace: string;
  let store: FileConversationStore;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-step-calls-'));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
    store = new FileConversationStore(path.join(root, 'runs'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const open = (ref: string) =>
    openTurn(
      store,
      {
        ref,
        model: 'stub',
        workspace,
        context: {
          role: 'coder',
          task: 'Write the files',
          language: 'python',
          attempt: 1,
          maxIterations: 3,
          protectedPaths: [],
        },
      },
      sources,
    );

  test('a call that reuses an id of an earlier answer is executed, not answered with the earlier result', async () => {
    const ref = await open('r/ids');
    // Servers that number each answer's calls from zero send the same ids every time.
    const model = scriptedModel([
      [create('call_0', 'a.py')],
      [create('call_0', 'b.py'), create('call_0', 'c.py')],
      [create('call_0_1', 'd.py')],
    ]);
    const ids: string[] = [];
    for (let step = 0; step < 3; step++) {
      const decision = await runAgentStep(store, model, ref, step);
      for (const call of decision.toolCalls) {
        ids.push(call.id);
        expect(await executeTurnToolCall(store, ref, call.id)).toEqual({ ok: true });
      }
    }
    expect(new Set(ids).size).toBe(4);
    expect(fs.readdirSync(workspace).sort()).toEqual(['a.py', 'b.py', 'c.py', 'd.py']);
    // Every call the model made is followed by its own answer, none by another's.
    const answers = toChatMessages(await store.load(ref)).filter((m) => m.role === 'tool');
    expect(answers.map((m) => JSON.parse(m.content as string).path)).toEqual([
      'a.py',
      'b.py',
      'c.py',
      'd.py',
    ]);
  });

  test(`only the first ${MAX_CALLS_PER_ANSWER} calls of one answer are executed; the rest are answered`, async () => {
    const ref = await open('r/many');
    const many = Array.from({ length: 1000 }, (_, i) => ({
      id: `c${i}`,
      name: 'run_command',
      arguments: JSON.stringify({ command: `echo ${i} > out-${i}.txt` }),
    }));
    const decision = await runAgentStep(store, scriptedModel([many]), ref, 0);
    expect(decision.toolCalls).toHaveLength(MAX_CALLS_PER_ANSWER);
    expect(decision.toolCalls.map((c) => c.id)).toEqual(many.slice(0, MAX_CALLS_PER_ANSWER).map((c) => c.id));
    const conversation = await store.load(ref);
    expect(conversation.toolResults[`c${MAX_CALLS_PER_ANSWER}`]).toEqual({
      ok: false,
      error: expect.stringMatching(/^not executed: at most \d+ tool calls of one answer/),
    });
    expect(Object.keys(conversation.toolResults)).toHaveLength(1000 - MAX_CALLS_PER_ANSWER);
  });
});
