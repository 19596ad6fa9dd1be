/**
 * A hostile MCP server that answers a call with 100 MB, over each way a message comes: an HTTP
 * JSON body, one SSE event, an SSE event of many lines, an HTTP error's body, a stdio line. The
 * worker must read no more than the bound of one message (its memory stays within a bound), give
 * the call up at once with an answer that says why (not a server that is down, which would be
 * retried and asked the same again), and go on serving.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpPool, McpServerUnavailableError, mcpToolAnswer, type McpCallOutcome } from '../../../src/mcp';
import { testServerConfig } from '../../helpers/mcp-test-config';
import { tempDirs } from '../../helpers/temp-dirs';
import { until } from '../../helpers/until';

const MiB = 1024 * 1024;
const FLOOD_BYTES = 100 * MiB;
/** What reading one answer may add to the worker's memory: the 4 MiB bound and the runtime's slack. */
const RSS_GROWTH_BOUND = 80 * MiB;

const tempDir = tempDirs('aca-mcp-answer-size-');

type Flood =
  | 'json body'
  | 'sse event'
  | 'sse event of many lines'
  | 'resumable sse event'
  | 'error body'
  | 'own event stream';

interface FloodingServer {
  server: http.Server;
  url: string;
  /** Bytes of flood written to the socket so far. */
  sent: number;
  /** The tools/call requests it was sent. */
  calls: number;
  /** GET requests that asked to resume an event stream (Last-Event-ID). */
  resumptions: number;
  /** After the first flooded call, answer calls as a good server would. */
  floodOnce: boolean;
}

/** Writes `head`, then `filler` until `bytes` or the client hangs up, then `tail`. */
async function pour(
  res: http.ServerResponse,
  served: FloodingServer,
  head: string,
  filler: Buffer,
  tail: string,
): Promise<void> {
  let open = true;
  let wake = () => undefined as void;
  res.on('close', () => {
    open = false;
    wake();
  });
  res.on('drain', () => wake());
  res.write(head);
  for (let sent = 0; open && sent < FLOOD_BYTES; sent += filler.length) {
    served.sent += filler.length;
    if (!res.write(filler)) await new Promise<void>((resolve) => (wake = resolve));
  }
  if (open) res.end(tail);
}

function flood(res: http.ServerResponse, served: FloodingServer, kind: Flood, id: unknown): Promise<void> {
  const answerHead = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
  const answerTail = '"}]}}';
  switch (kind) {
    case 'json body':
      res.writeHead(200, { 'content-type': 'application/json' });
      return pour(res, served, answerHead, Buffer.alloc(64 * 1024, 'x'), answerTail);
    case 'sse event':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return pour(res, served, `data: ${answerHead}`, Buffer.alloc(64 * 1024, 'x'), `${answerTail}\n\n`);
    case 'sse event of many lines': {
      // One event whose data is many lines: the SDK's parser joins them, so each line break is
      // part of the one message (only a blank line ends it), whatever mix of CR and LF is used.
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      const line = `data: ${'x'.repeat(1000)}`;
      const lines = Buffer.from(`${line}\r\n${line}\n${line}\r`.repeat(20));
      return pour(res, served, `data: ${answerHead}\n`, lines, `data: ${answerTail}\n\n`);
    }
    case 'resumable sse event':
      // An event id makes the stream one the SDK resumes with a GET when it breaks, at once when
      // the server asks for no wait (`retry: 0`), and as often as it breaks.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return pour(
        res,
        served,
        `retry: 0\nid: 1\ndata:\n\ndata: ${answerHead}`,
        Buffer.alloc(64 * 1024, 'x'),
        `${answerTail}\n\n`,
      );
    case 'own event stream':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return pour(res, served, 'data: {"jsonrpc":"2.0","method":"', Buffer.alloc(64 * 1024, 'x'), '"}\n\n');
    case 'error body':
      res.writeHead(500, { 'content-type': 'text/plain' });
      return pour(res, served, 'it went wrong: ', Buffer.alloc(64 * 1024, 'e'), '');
  }
}

/** An MCP server over HTTP whose `whoami` answers as `kind` floods; everything else is served as usual. */
async function startFloodingServer(kind: Flood): Promise<FloodingServer> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const message = (text ? JSON.parse(text) : undefined) as { method?: string; id?: unknown } | undefined;
      if (req.method === 'GET') {
        const resuming = req.headers['last-event-id'] !== undefined;
        if (resuming) served.resumptions += 1;
        if (kind === 'resumable sse event' && resuming) return void flood(res, served, kind, null);
        if (kind === 'own event stream' && served.sent === 0) return void flood(res, served, kind, null);
        return void res.writeHead(405).end();
      }
      if (message?.method === 'tools/call' && kind !== 'own event stream') {
        served.calls += 1;
        if (served.calls === 1 || !served.floodOnce) return void flood(res, served, kind, message.id);
      }
      const mcp = new McpServer({ name: 'flood-test', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'Says who.' }, () => ({
        content: [{ type: 'text', text: 'me' }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close());
      void mcp.connect(transport).then(() => transport.handleRequest(req, res, message));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const served: FloodingServer = {
    server,
    url: `http://127.0.0.1:${port}/mcp`,
    sent: 0,
    calls: 0,
    resumptions: 0,
    floodOnce: true,
  };
  return served;
}

const stop = (server: http.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** The most the process's resident memory grew by while `work` ran, sampled every few ms. */
async function rssGrowthDuring<T>(work: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const base = process.memoryUsage.rss();
  let peak = base;
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
  const timer = setInterval(sample, 5);
  try {
    const value = await work();
    sample();
    return { value, growth: peak - base };
  } finally {
    clearInterval(timer);
  }
}

function httpPool(url: string): McpPool {
  return new McpPool(
    {
      file: 'test',
      servers: [{ name: 'remote', transport: 'http', url, headers: {}, roles: ['coder'], tools: null }],
    },
    { restartFirstMs: 3_600_000, restartMaxMs: 3_600_000, connectTimeoutMs: 30_000, log: () => undefined },
  );
}

function expectTooLarge(outcome: McpCallOutcome): string {
  expect(outcome.kind).toBe('too-large');
  const message = outcome.kind === 'too-large' ? outcome.message : '';
  expect(message).toMatch(/over 4 MiB/);
  return message;
}

const answered = (outcome: McpCallOutcome) => outcome.kind === 'result' && mcpToolAnswer(outcome.result);

describe.each<Flood>(['json body', 'sse event', 'sse event of many lines', 'resumable sse event'])(
  'an HTTP server that answers a call with a 100 MB %s',
  (kind) => {
    test('is read no further than the bound, the call is answered as too large, and the server stays in use', async () => {
      const served = await startFloodingServer(kind);
      const pool = httpPool(served.url);
      try {
        await pool.start();
        expect(pool.status()[0]!.ok).toBe(true);
        const { value: outcome, growth } = await rssGrowthDuring(() =>
          pool.call('remote', 'whoami', {}, { timeoutMs: 60_000 }),
        );
        expect(expectTooLarge(outcome)).toMatch(/not read/);
        expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
        // The answer was broken off: the server could not send the rest.
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(served.sent).toBeLessThan(FLOOD_BYTES / 4);
        // The call was made once, its answer not asked for again, and the server serves the next one.
        expect(served.calls).toBe(1);
        expect(served.resumptions).toBe(0);
        expect(pool.status()[0]!.ok).toBe(true);
        expect(answered(await pool.call('remote', 'whoami', {}, { timeoutMs: 30_000 }))).toEqual({
          ok: true,
          content: 'me',
        });
      } finally {
        await pool.close();
        await stop(served.server);
      }
    });
  },
);

test("an HTTP error's 100 MB body is cut short: the server is down, saying so on one short line", async () => {
  const served = await startFloodingServer('error body');
  const pool = httpPool(served.url);
  try {
    await pool.start();
    const { value: failure, growth } = await rssGrowthDuring(() =>
      pool.call('remote', 'whoami', {}, { timeoutMs: 60_000 }).catch((err: unknown) => err),
    );
    expect(failure).toBeInstanceOf(McpServerUnavailableError);
    expect((failure as Error).message).toContain('it went wrong: eee');
    expect((failure as Error).message.length).toBeLessThan(5_000);
    expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
    expect(served.sent).toBeLessThan(FLOOD_BYTES / 4);
  } finally {
    await pool.close();
    await stop(served.server);
  }
});

test("an event over the bound on the server's own stream, which no call waits for, closes the connection", async () => {
  const served = await startFloodingServer('own event stream');
  const logged: string[] = [];
  const pool = new McpPool(
    {
      file: 'test',
      servers: [
        { name: 'remote', transport: 'http', url: served.url, headers: {}, roles: ['coder'], tools: null },
      ],
    },
    { restartFirstMs: 50, restartMaxMs: 50, connectTimeoutMs: 30_000, log: (line) => logged.push(line) },
  );
  try {
    const { growth } = await rssGrowthDuring(async () => {
      await pool.start();
      await until(() => logged.length > 0, 30_000, 'the connection to be closed');
    });
    expect(logged[0]).toMatch(/MCP server "remote" is down: a message over 4 MiB .* outside any tool call/);
    expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
    expect(served.sent).toBeLessThan(FLOOD_BYTES / 4);
    // Connected again, to a server that floods no more.
    await until(() => pool.status()[0]!.ok && pool.status()[0]!.restarts >= 1, 30_000, 'a new connection');
    expect(answered(await pool.call('remote', 'whoami', {}, { timeoutMs: 30_000 }))).toEqual({
      ok: true,
      content: 'me',
    });
  } finally {
    await pool.close();
    await stop(served.server);
  }
});

describe('a stdio server', () => {
  /** A pool of the stdio test server, started again 50 ms after it goes down. */
  function stdioPool(callLog: string): McpPool {
    return new McpPool(
      { file: 'test', servers: [testServerConfig('local', { MCP_TEST_CALL_LOG: callLog })] },
      { restartFirstMs: 50, restartMaxMs: 50, connectTimeoutMs: 30_000, log: () => undefined },
    );
  }

  test.each(['huge', 'flood'])(
    'that answers with a line over the bound (%s): the call is answered as too large, the server started again',
    async (key) => {
      const pool = stdioPool(path.join(tempDir(), 'calls.log'));
      try {
        await pool.start();
        const { value: outcome, growth } = await rssGrowthDuring(() =>
          pool.call('local', 'lookup', { key }, { timeoutMs: 60_000 }),
        );
        expect(expectTooLarge(outcome)).toMatch(/started again/);
        expect(growth).toBeLessThan(RSS_GROWTH_BOUND);
        await until(
          () => pool.status()[0]!.ok && pool.status()[0]!.restarts === 1,
          60_000,
          'the server to be started again',
        );
        expect(answered(await pool.call('local', 'lookup', { key: 'k' }, { timeoutMs: 30_000 }))).toEqual({
          ok: true,
          content: 'value of k',
        });
      } finally {
        await pool.close();
      }
    },
  );
});
