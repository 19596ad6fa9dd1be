import { toChatMessages } from '../../../src/agents/agent-turn';
import { chooseTrimmed, estimateTokens } from '../../../src/agents/context-trim';
import type { Conversation } from '../../../src/store/conversation-store';
import { contextBudgetFor, contextWindowOf, DEFAULT_CONTEXT_TOKENS } from '../../../src/llm/context-window';

const bigFile = (lines: number) =>
  Array.from({ length: lines }, (_, i) => `line ${i + 1}: ${'x'.repeat(40)}`).join('\n');

/** A Coder turn of three steps: two old reads and a search, then the latest read. */
function conversation(): Conversation {
  return {
    ref: 'r/coder-1',
    role: 'coder',
    model: 'm',
    language: 'python',
    workspace: '/ws',
    protectedPaths: [],
    entries: [
      { kind: 'system', content: 'SYSTEM PROMPT' },
      { kind: 'user', content: `Task: ${'describe the task '.repeat(50)}` },
      {
        kind: 'assistant',
        content: null,
        toolCalls: [
          { id: 'c1', name: 'read_file', arguments: '{"path":"src/x.py"}' },
          { id: 'c2', name: 'search_files', arguments: '{"pattern":"def f","path":"src"}' },
        ],
      },
      {
        kind: 'assistant',
        content: null,
        toolCalls: [{ id: 'c3', name: 'read_file', arguments: '{"path":"src/y.py"}' }],
      },
      {
        kind: 'assistant',
        content: null,
        toolCalls: [{ id: 'c4', name: 'read_file', arguments: '{"path":"src/z.py"}' }],
      },
    ],
    toolResults: {
      c1: {
        ok: true,
        path: 'src/x.py',
        content: bigFile(400),
        start_line: 1,
        end_line: 400,
        total_lines: 400,
      },
      c2: {
        ok: true,
        matches: Array.from({ length: 50 }, (_, i) => ({ path: 'src/a.py', line: i, text: 'def f(): pass' })),
      },
      c3: {
        ok: true,
        path: 'src/y.py',
        content: bigFile(300),
        start_line: 1,
        end_line: 300,
        total_lines: 300,
      },
      c4: {
        ok: true,
        path: 'src/z.py',
        content: bigFile(300),
        start_line: 1,
        end_line: 300,
        total_lines: 300,
      },
    },
    steps: [],
  };
}

describe('trimming a conversation to its context budget', () => {
  test('nothing is trimmed while it fits', () => {
    const c = conversation();
    const tokens = estimateTokens(toChatMessages(c));
    expect(chooseTrimmed(c, tokens, tokens).size).toBe(0);
  });

  test('the oldest answers go first, as one-line stubs saying what was read or searched and its size', () => {
    const c = conversation();
    const whole = toChatMessages(c);
    const tokens = estimateTokens(whole);
    // Just over budget by a little: the oldest answer alone is enough.
    const trimmed = chooseTrimmed(c, tokens, tokens - 100);
    expect([...trimmed]).toEqual(['c1']);
    const sent = toChatMessages(c, trimmed);
    const stub = JSON.parse(String(sent.find((m) => m.role === 'tool' && m.tool_call_id === 'c1')!.content));
    expect(stub).toEqual({
      ok: true,
      trimmed: expect.stringMatching(
        /^read_file src\/x\.py lines 1-400 of 400, \d+ chars; read it again if needed$/,
      ),
    });
    expect(estimateTokens(sent)).toBeLessThanOrEqual(tokens - 100);
  });

  test('never the system message, the first user message or the latest step, however small the budget', () => {
    const c = conversation();
    const trimmed = chooseTrimmed(c, estimateTokens(toChatMessages(c)), 10);
    expect([...trimmed].sort()).toEqual(['c1', 'c2', 'c3']);
    const sent = toChatMessages(c, trimmed);
    expect(sent[0]).toEqual({ role: 'system', content: 'SYSTEM PROMPT' });
    expect(sent[1]).toEqual(toChatMessages(c)[1]);
    const latest = sent.find((m) => m.role === 'tool' && m.tool_call_id === 'c4')!;
    expect(String(latest.content)).toContain('line 300:');
    const search = JSON.parse(
      String(sent.find((m) => m.role === 'tool' && m.tool_call_id === 'c2')!.content),
    );
    expect(search.trimmed).toMatch(
      /^search_files "def f" in src, 50 matches, \d+ chars; search again if needed$/,
    );
  });

  test('the stored conversation is left whole and the choice is the same every time (a retried step sends the same)', () => {
    const c = conversation();
    const before = JSON.stringify(c);
    const tokens = estimateTokens(toChatMessages(c));
    const first = toChatMessages(c, chooseTrimmed(c, tokens, tokens / 2));
    const again = toChatMessages(c, chooseTrimmed(c, tokens, tokens / 2));
    expect(again).toEqual(first);
    expect(JSON.stringify(c)).toBe(before);
  });
});

describe('context windows', () => {
  test.each([
    ['gpt-4o', 128_000],
    ['gpt-4o-mini', 128_000],
    ['openai/gpt-4.1-mini', 1_000_000],
    ['o4-mini', 200_000],
    ['gpt-5-mini', 400_000],
    ['llama3:8b', 8_192],
    ['llama3.1:8b', 131_072],
    ['qwen2.5-coder:7b', 32_768],
    ['deepseek-chat', 65_536],
    ['some-local-model', DEFAULT_CONTEXT_TOKENS],
  ])('%s has %i tokens', (model, tokens) => {
    expect(contextWindowOf(model)).toBe(tokens);
  });

  test('context_tokens in the options wins, and room is kept for the answer', () => {
    expect(contextBudgetFor('gpt-4o', { context_tokens: 16_000 })).toEqual({
      contextTokens: 16_000,
      answerTokens: 4_000,
    });
    expect(contextBudgetFor('gpt-4o', { max_completion_tokens: 2_000 })).toEqual({
      contextTokens: 128_000,
      answerTokens: 2_000,
    });
    expect(contextBudgetFor('gpt-4o')).toEqual({ contextTokens: 128_000, answerTokens: 8_192 });
  });
});
