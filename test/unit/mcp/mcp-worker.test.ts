/**
 * A worker with ACA_MCP_CONFIG against the shared Temporal dev server: it starts the servers and
 * polls one queue per server, where a workflow's MCP calls run as activities. The server crashing
 * mid-call fails the attempt and Temporal's retry, after the worker started it again, answers;
 * a call that answered is never made again when the workflow asks for it once more.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { McpToolCallInput } from '../../../src/activities/mcp-activities';
import { mcpStatusLines, createRunStores } from '../../../src/worker';
import type { Conversation } from '../../../src/store/conversation-store';
import type { RunStores } from '../../../src/store/run-store-repository';
import { createHarness, type Harness } from '../../helpers/agent-harness';
import { testServerEntry } from '../../helpers/mcp-test-config';
import { tempDirs } from '../../helpers/temp-dirs';
import { getTestTemporal } from '../../helpers/temporal-env';
import { mcpCallWorkflow } from './mcp-call-workflow';

const tempDir = tempDirs('aca-mcp-worker-');

let harness: Harness;
let stores: RunStores;
let callLog: string;
let crashMarker: string;
let connection: NativeConnection;
let callerWorker: Worker;
let callerRun: Promise<void>;
const callerQueue = `mcp-caller-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  const dir = tempDir();
  callLog = path.join(dir, 'calls.log');
  crashMarker = path.join(dir, 'crashed');
  const file = path.join(dir, 'mcp.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        tools: testServerEntry({ MCP_TEST_CALL_LOG: callLog, MCP_TEST_CRASH_ONCE: crashMarker }),
        broken: testServerEntry({ MCP_TEST_EXIT_AT_START: '4' }),
      },
    }),
  );
  harness = await createHarness({ env: { ACA_MCP_CONFIG: file } });
  stores = createRunStores(harness.config);
  await harness.startWorker();
  const temporal = getTestTemporal();
  connection = await NativeConnection.connect({ address: temporal.address });
  callerWorker = await Worker.create({
    connection,
    namespace: temporal.namespace,
    taskQueue: callerQueue,
    workflowsPath: require.resolve('./mcp-call-workflow'),
  });
  callerRun = callerWorker.run();
});

afterAll(async () => {
  callerWorker?.shutdown();
  await callerRun;
  await connection?.close();
  await harness?.close();
  await stores?.close();
});

let turns = 0;
async function turnCalling(
  name: string,
  args: unknown,
): Promise<{ input: McpToolCallInput; server: string }> {
  const ref = `mcp-worker-${randomBytes(3).toString('hex')}-${++turns}/coder-1`;
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
      { kind: 'assistant', content: null, toolCalls: [{ id: 'c1', name, arguments: JSON.stringify(args) }] },
    ],
    toolResults: {},
    steps: [],
  };
  await stores.conversations.save(conversation);
  return { input: { ref, toolCallId: 'c1' }, server: name.split('__')[1]! };
}

const callsMade = () => (fs.existsSync(callLog) ? fs.readFileSync(callLog, 'utf8').trim().split('\n') : []);

function runCalls(calls: Array<{ input: McpToolCallInput; server: string }>) {
  return harness.client.workflow.execute(mcpCallWorkflow, {
    taskQueue: callerQueue,
    workflowId: `mcp-calls-${randomBytes(4).toString('hex')}`,
    args: [harness.taskQueue, calls],
  });
}

test('a crash mid-call is retried on the restarted server; an answered call is never made again', async () => {
  const sum = await turnCalling('mcp__tools__slow_sum', { a: 40, b: 2, delay_ms: 0 });
  const lookup = await turnCalling('mcp__tools__lookup', { key: 'k' });
  expect(await runCalls([sum, lookup])).toEqual([{ ok: true }, { ok: true }]);
  // The first slow_sum took the server down with it; the retry answered.
  expect(fs.existsSync(crashMarker)).toBe(true);
  expect(callsMade()).toEqual([
    'slow_sum {"a":40,"b":2,"delay_ms":0}',
    'slow_sum {"a":40,"b":2,"delay_ms":0}',
    'lookup {"key":"k"}',
  ]);
  expect((await stores.conversations.load(sum.input.ref)).toolResults.c1).toEqual({
    ok: true,
    content: '42',
  });
  expect((await stores.conversations.load(lookup.input.ref)).toolResults.c1).toEqual({
    ok: true,
    content: 'value of k',
  });

  // Asked again (a replay, a retried workflow task): the stored answers, no call to the server.
  expect(await runCalls([sum, lookup])).toEqual([{ ok: true }, { ok: true }]);
  expect(callsMade()).toHaveLength(3);
});

test("a tool's error is the model's to read; the workflow goes on", async () => {
  const failing = await turnCalling('mcp__tools__lookup', { key: 'fail' });
  expect(await runCalls([failing])).toEqual([
    { ok: false, error: 'the tool reported an error: no such key' },
  ]);
});

test('what `aca worker` says of its servers at start', () => {
  const lines = mcpStatusLines('q', [
    {
      server: 'tools',
      transport: 'stdio',
      ok: true,
      tools: ['mcp__tools__lookup'],
      error: null,
      restarts: 0,
    },
    { server: 'broken', transport: 'stdio', ok: false, tools: [], error: 'it exited', restarts: 0 },
  ]);
  expect(lines).toEqual([
    '  MCP server "tools" on "q-mcp-tools": 1 tools (mcp__tools__lookup)',
    '  MCP server "broken" is down, started again in the background: it exited',
  ]);
});
