/**
 * A Reset's new execution takes a turn over as it stood at the reset point: the steps before it,
 * and only the answers of the calls that had run by then.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { conversationAt, takeUpConversation } from '../../../src/agents/conversation-fork';
import { FileConversationStore, type Conversation } from '../../../src/store/conversation-store';

const call = (id: string, name = 'read_file') => ({ id, name, arguments: '{"path":"a.py"}' });
const decision = (ids: string[]) => ({
  toolCalls: ids.map((id) => ({ kind: 'file' as const, id, name: 'read_file' as const, target: 'a.py' })),
  finished: null,
  progress: true,
  usage: { prompt: 1, completion: 1 },
  note: null,
});

/** Three steps: s0 asks for a0 and a1 (a bad call, answered by the step itself), s1 for b0 and b1, s2 for c0. */
function earlier(): Conversation {
  return {
    ref: 'wf/first/old-exec/coder-1',
    role: 'coder',
    model: 'm',
    language: 'python',
    workspace: '/w',
    protectedPaths: [],
    entries: [
      { kind: 'system', content: 'sys' },
      { kind: 'user', content: 'task' },
      { kind: 'assistant', content: null, toolCalls: [call('a0'), call('a1', 'no_such_tool')] },
      { kind: 'assistant', content: null, toolCalls: [call('b0'), call('b1')] },
      { kind: 'user', content: 'Please continue by calling one of your tools.' },
      { kind: 'assistant', content: null, toolCalls: [call('c0')] },
    ],
    toolResults: {
      a0: { ok: true },
      a1: { ok: false, error: 'unknown tool' },
      b0: { ok: true },
      b1: { ok: true },
      c0: { ok: true },
    },
    toolCommits: { a0: 'c-a0', b1: 'c-b1' },
    steps: [decision(['a0']), decision(['b0', 'b1']), decision(['c0'])],
  };
}

describe('the conversation at a point of the turn', () => {
  test('before a model step: the steps before it, every answer of theirs, nothing after', () => {
    const at = conversationAt(earlier(), 'wf/first/new-exec/coder-1', { step: 1 });
    expect(at.ref).toBe('wf/first/new-exec/coder-1');
    expect(at.entries.map((e) => e.kind)).toEqual(['system', 'user', 'assistant']);
    expect(at.steps).toHaveLength(1);
    expect(Object.keys(at.toolResults).sort()).toEqual(['a0', 'a1']);
    expect(at.toolCommits).toEqual({ a0: 'c-a0' });
  });

  test("before step 2: step 1's nudge kept, as it was sent with step 2", () => {
    const at = conversationAt(earlier(), 'new', { step: 2 });
    expect(at.entries.map((e) => e.kind)).toEqual(['system', 'user', 'assistant', 'assistant', 'user']);
    expect(Object.keys(at.toolResults).sort()).toEqual(['a0', 'a1', 'b0', 'b1']);
  });

  test('before the first step: the opening alone', () => {
    const at = conversationAt(earlier(), 'new', { step: 0 });
    expect(at.entries.map((e) => e.kind)).toEqual(['system', 'user']);
    expect(at).toMatchObject({ steps: [], toolResults: {} });
    expect(at).not.toHaveProperty('toolCommits');
  });

  test("at a call: its step kept, with the answers of the calls before it and the step's own", () => {
    const atSecond = conversationAt(earlier(), 'new', { call: 'b1' });
    expect(atSecond.steps).toHaveLength(2);
    expect(atSecond.entries.map((e) => e.kind)).toEqual(['system', 'user', 'assistant', 'assistant', 'user']);
    expect(Object.keys(atSecond.toolResults).sort()).toEqual(['a0', 'a1', 'b0']);
    expect(atSecond.toolCommits).toEqual({ a0: 'c-a0' });
    const atFirst = conversationAt(earlier(), 'new', { call: 'a0' });
    // a1 was answered by the step itself (a call it refused): it stays.
    expect(Object.keys(atFirst.toolResults)).toEqual(['a1']);
    expect(atFirst.steps).toHaveLength(1);
  });

  test('a call the turn never asked for is an error', () => {
    expect(() => conversationAt(earlier(), 'new', { call: 'zz' })).toThrow(/zz is not part of/);
  });
});

describe('taking a turn over', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-fork-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test("once: the new execution's conversation is made from the earlier one, then left as it goes on", async () => {
    const store = new FileConversationStore(root);
    await store.save(earlier());
    const ref = 'wf/first/new-exec/coder-1';
    await takeUpConversation(store, ref, earlier().ref, { step: 1 });
    const taken = await store.load(ref);
    expect(taken.steps).toHaveLength(1);
    // A retry of the same step finds the conversation it already took (with what it added since).
    taken.steps.push(decision(['x']));
    await store.save(taken);
    await takeUpConversation(store, ref, earlier().ref, { step: 1 });
    expect((await store.load(ref)).steps).toHaveLength(2);
    // The earlier execution's conversation is left as it was.
    expect((await store.load(earlier().ref)).steps).toHaveLength(3);
  });

  test('this execution opened it: nothing is taken', async () => {
    const store = new FileConversationStore(root);
    const ref = 'wf/first/same/coder-1';
    await takeUpConversation(store, ref, ref, { step: 0 });
    expect(await store.exists(ref)).toBe(false);
  });

  test('an earlier conversation that is not stored here fails the step', async () => {
    const store = new FileConversationStore(root);
    await expect(
      takeUpConversation(store, 'wf/first/b/coder-1', 'wf/first/a/coder-9', { step: 0 }),
    ).rejects.toThrow(/no conversation is stored/);
  });
});
