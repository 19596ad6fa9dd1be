/**
 * callMcpTool against the stdio test server: the answer is stored in the turn's conversation and
 * a call that answered is never made again; bad arguments, unknown tools, tool errors, a hang and
 * an answer too large are answers the model reads; a server that is down fails the attempt for
 * Temporal to retry.
 */
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createMcpActivities, type McpToolCallInput } from '../../../src/activities/mcp-activities';
import type { ToolCallOutcome } from '../../../src/agents/agent-turn';
import { McpPool } from '../../../src/mcp';
import { FileConversationStore, type Conversation } from '../../../src/store/conversation-store';
import { testServerConfig } from '../../helpers/mcp-test-config';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-mcp-activities-');

let pool: McpPool;
let store: FileConversationStore;
const calls: string[] = [];

beforeAll(async () => {
  pool = new McpPool(
    {
      file: 'test',
      servers: [
        testServerConfig('tools'),
        testServerConfig('down', { MCP_TEST_EXIT_AT_START: '1' }),
        testServerConfig('large'),
      ],
    },
    { restartFirstMs: 60_000, restartMaxMs: 60_000, log: () => undefined },
  );
  await pool.start();
  store = new FileConversationStore(path.join(tempDir(), 'runs'));
});
afterAll(() => pool.close());

/** The activities over the pool, each call the server is asked noted in `calls`. */
function activities(callTimeoutMs = 30_000) {
  return createMcpActivities({
    store,
    callTimeoutMs,
    pool: {
      resolve: (name) => pool.resolve(name),
      call: (server, tool, args, options) => {
        calls.push(`${server}/${tool}`);
        return pool.call(server, tool, args, options);
      },
    },
  });
}

let turns = 0;
/** A coder turn whose one step asked for `name(args)` as call `c1`. */
async function turnCalling(
  name: string,
  args: string,
  offered?: Array<{ name: string; server: string; tool: string }>,
): Promise<McpToolCallInput> {
  const ref = `run-${++turns}/coder-1`;
  const conversation: Conversation = {
    ref,
    role: 'coder',
    model: 'scripted:any',
    language: 'python',
    workspace: '/nonexistent',
    protectedPaths: [],
    entries: [
      { kind: 'system', content: 's' },
      { kind: 'user', content: 'u' },
      { kind: 'assistant', content: null, toolCalls: [{ id: 'c1', name, arguments: args }] },
    ],
    toolResults: {},
    steps: [],
  };
  const kept = offered
    ? {
        ...conversation,
        offered: { runCommand: false, mcp: offered.map((t) => ({ ...t, description: '', parameters: {} })) },
      }
    : conversation;
  await store.save(kept);
  return { ref, toolCallId: 'c1' };
}

const run = (input: McpToolCallInput, callTimeoutMs?: number): Promise<ToolCallOutcome> =>
  new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR', () => undefined) }).run(
    activities(callTimeoutMs).callMcpTool,
    input,
  );

beforeEach(() => {
  calls.length = 0;
});

test('a call answers, its answer is stored, and a retry or replay never asks the server again', async () => {
  const input = await turnCalling('mcp__tools__slow_sum', '{"a": 20, "b": 22, "delay_ms": 0}');
  expect(await run(input)).toEqual({ ok: true });
  expect((await store.load(input.ref)).toolResults.c1).toEqual({ ok: true, content: '42' });
  expect(await run(input)).toEqual({ ok: true });
  expect(await run(input)).toEqual({ ok: true });
  expect(calls).toEqual(['tools/slow_sum']);
});

test.each([
  ['[1, 2]', 'the arguments must be a JSON object'],
  ['"text"', 'the arguments must be a JSON object'],
  ['{"key": ', 'the arguments are not valid JSON'],
])('arguments %s are answered, not sent', async (args, error) => {
  const input = await turnCalling('mcp__tools__lookup', args);
  const outcome = await run(input);
  expect(outcome.ok).toBe(false);
  expect(outcome.error).toContain(error);
  expect((await store.load(input.ref)).toolResults.c1).toEqual({ ok: false, error: outcome.error });
  expect(calls).toEqual([]);
});

test('a tool no server here offers is answered as unknown', async () => {
  for (const name of ['mcp__tools__nope', 'mcp__nobody__lookup', 'read_file']) {
    const outcome = await run(await turnCalling(name, '{}'));
    expect(outcome).toEqual({ ok: false, error: `unknown tool "${name}": no MCP server here offers it` });
  }
  expect(calls).toEqual([]);
});

test("a tool's error and a tool that hangs are answers; the model reads them and the run goes on", async () => {
  const failed = await run(await turnCalling('mcp__tools__lookup', '{"key": "fail"}'));
  expect(failed).toEqual({ ok: false, error: 'the tool reported an error: no such key' });
  const hung = await turnCalling('mcp__tools__slow_sum', '{"a": 1, "b": 1, "delay_ms": 60000}');
  const outcome = await run(hung, 300);
  expect(outcome.ok).toBe(false);
  expect(outcome.error).toMatch(/did not answer within 300 ms and was given up/);
  expect((await store.load(hung.ref)).toolResults.c1).toEqual({ ok: false, error: outcome.error });
});

// Taken for a server that is down, the call would be retried, the tool run again, and the same
// answer too large sent again, for as long as Temporal retries.
test('an answer over the bound is an answer, stored once; the call is not made again', async () => {
  const input = await turnCalling('mcp__large__lookup', '{"key": "huge"}');
  const outcome = await run(input);
  expect(outcome.ok).toBe(false);
  expect(outcome.error).toMatch(/sent a message over 4 MiB .*started again.*Ask it for less/);
  expect((await store.load(input.ref)).toolResults.c1).toEqual({ ok: false, error: outcome.error });
  expect(await run(input)).toEqual(outcome);
  expect(calls).toEqual(['large/lookup']);
});

test('a server that is down fails the attempt, retryably, and stores nothing', async () => {
  const input = await turnCalling('mcp__down__lookup', '{"key": "k"}');
  const failure = (await run(input).catch((err: unknown) => err)) as ApplicationFailure;
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({ type: 'McpServerUnavailable', nonRetryable: false });
  expect(failure.message).toMatch(/MCP server "down" is not available: .*told to fail at start/);
  expect((await store.load(input.ref)).toolResults).toEqual({});
});

test('a call of a conversation this worker does not have fails at once, saying why', async () => {
  const failure = (await run({ ref: 'elsewhere/coder-1', toolCallId: 'c1' }).catch(
    (err: unknown) => err,
  )) as ApplicationFailure;
  expect(failure).toMatchObject({ type: 'ConversationMissing', nonRetryable: true });
  expect(failure.message).toContain('DATABASE_URL');
});

test('a call goes where the turn was offered it as it opened', async () => {
  const offered = [
    { name: 'mcp__tools__find', server: 'tools', tool: 'lookup' },
    { name: 'mcp__gone__lookup', server: 'gone', tool: 'lookup' },
  ];
  const found = await turnCalling('mcp__tools__find', '{"key": "k"}', offered);
  expect(await run(found)).toEqual({ ok: true });
  expect((await store.load(found.ref)).toolResults.c1).toEqual({ ok: true, content: 'value of k' });
  // A server this worker has no entry for: the model is told, nothing is retried.
  const gone = await turnCalling('mcp__gone__lookup', '{"key": "k"}', offered);
  expect(await run(gone)).toEqual({
    ok: false,
    error: 'unknown tool "mcp__gone__lookup": no MCP server here offers it',
  });
  expect(calls).toEqual(['tools/lookup', 'gone/lookup']);
});

test("a tool the turn was not offered is unknown, though this worker's server has it", async () => {
  // A role left out of a server's `roles` is offered none of its tools; naming one reaches nothing.
  const notOffered = await turnCalling('mcp__tools__lookup', '{"key": "k"}', []);
  expect(await run(notOffered)).toEqual({
    ok: false,
    error: 'unknown tool "mcp__tools__lookup": no MCP server here offers it',
  });
  const otherTool = await turnCalling('mcp__tools__lookup', '{"key": "k"}', [
    { name: 'mcp__tools__find', server: 'tools', tool: 'lookup' },
  ]);
  expect((await run(otherTool)).ok).toBe(false);
  expect(calls).toEqual([]);
});
