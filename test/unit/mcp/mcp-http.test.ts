/**
 * A streamable HTTP server in the pool: the file's headers are sent, its tools are listed and
 * called, and a server that goes away and comes back is connected to afresh.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpPool, McpServerUnavailableError, mcpToolAnswer } from '../../../src/mcp';
import { until } from '../../helpers/until';

/** A stateless MCP server on `port` (0: any) with one tool, `whoami`, answering the Authorization header. */
async function startHttpServer(port = 0): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const mcp = new McpServer({ name: 'http-test', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'Says who asked.' }, (extra) => ({
      content: [{ type: 'text', text: String(extra.requestInfo?.headers.authorization ?? 'nobody') }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

const stop = (server: http.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

test('headers sent, tools listed and called; a server that went away and came back is used again', async () => {
  let server = await startHttpServer();
  const { port } = server.address() as AddressInfo;
  const pool = new McpPool(
    {
      file: 'test',
      servers: [
        {
          name: 'remote',
          transport: 'http',
          url: `http://127.0.0.1:${port}/mcp`,
          headers: { Authorization: 'Bearer from-the-file' },
          roles: ['coder'],
          tools: null,
        },
      ],
    },
    { restartFirstMs: 100, restartMaxMs: 100, connectTimeoutMs: 30_000, log: () => undefined },
  );
  try {
    await pool.start();
    expect(pool.status()[0]).toMatchObject({ ok: true, transport: 'http', tools: ['mcp__remote__whoami'] });
    const call = () => pool.call('remote', 'whoami', {}, { timeoutMs: 30_000 });
    const first = await call();
    expect(first.kind === 'result' && mcpToolAnswer(first.result)).toEqual({
      ok: true,
      content: 'Bearer from-the-file',
    });

    await stop(server);
    await expect(call()).rejects.toThrow(McpServerUnavailableError);
    server = await startHttpServer(port);
    // The connection found broken was dropped and made again, not kept.
    await until(
      () => pool.status()[0]!.ok && pool.status()[0]!.restarts === 1,
      60_000,
      'the HTTP server to be connected again',
    );
    const again = await call();
    expect(again.kind === 'result' && mcpToolAnswer(again.result)).toEqual({
      ok: true,
      content: 'Bearer from-the-file',
    });
  } finally {
    await pool.close();
    await stop(server);
  }
});

/**
 * An HTTP server that answers as an MCP server except for `failing` methods: HTTP 500 with `body`,
 * or (with `result`) a JSON-RPC answer of that result.
 */
async function startFailingServer(
  failing: string,
  body: string,
  result?: unknown,
): Promise<http.Server & { asked: number }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const message = (text ? JSON.parse(text) : {}) as { method?: string; id?: unknown };
      if (message.method === failing) {
        served.asked += 1;
        if (result === undefined) res.writeHead(500, { 'content-type': 'text/plain' }).end(body);
        else
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
        return;
      }
      const mcp = new McpServer({ name: 'http-test', version: '1.0.0' });
      mcp.registerTool('whoami', { description: 'Says who asked.' }, () => ({
        content: [{ type: 'text', text: 'me' }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close());
      void mcp
        .connect(transport)
        .then(() => transport.handleRequest(req, res, text ? JSON.parse(text) : undefined));
    });
  });
  const served = Object.assign(server, { asked: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return served;
}

// The body of an HTTP error is the server's text, and ends up in the reason the server is down:
// in the worker's log and start lines, `aca doctor`, and the failure workflow history keeps.
const HOSTILE_BODY = `\u001b]52;c;ZXZpbA==\u0007\u001b[2K\rSUCCESS\u202e\n${'x'.repeat(1_000_000)}`;

function expectShownSafely(reason: string): void {
  expect(reason).not.toMatch(/[\p{Cc}\p{Cf}]/u);
  expect(reason.length).toBeLessThan(5_000);
}

test.each(['initialize', 'tools/call'])(
  "an HTTP error's body at %s is shown on one short line, its escapes made visible",
  async (failing) => {
    const server = await startFailingServer(failing, HOSTILE_BODY);
    const { port } = server.address() as AddressInfo;
    const logged: string[] = [];
    const pool = new McpPool(
      {
        file: 'test',
        servers: [
          {
            name: 'remote',
            transport: 'http',
            url: `http://127.0.0.1:${port}/mcp`,
            headers: {},
            roles: ['coder'],
            tools: null,
          },
        ],
      },
      {
        restartFirstMs: 3_600_000,
        restartMaxMs: 3_600_000,
        connectTimeoutMs: 30_000,
        log: (line) => logged.push(line),
      },
    );
    try {
      await pool.start();
      if (failing === 'tools/call') {
        expect(pool.status()[0]!.ok).toBe(true);
        const failure = (await pool
          .call('remote', 'whoami', {}, { timeoutMs: 30_000 })
          .catch((err: unknown) => err)) as Error;
        expect(failure).toBeInstanceOf(McpServerUnavailableError);
        expect(failure.message).toContain('SUCCESS');
        expectShownSafely(failure.message);
        await until(() => logged.length > 0, 30_000, 'the dropped connection to be noticed');
      }
      const status = pool.status()[0]!;
      expect(status.ok).toBe(false);
      expect(status.error).toContain('SUCCESS');
      expectShownSafely(status.error!);
      expect(logged.length).toBeGreaterThan(0);
      for (const line of logged) expectShownSafely(line);
    } finally {
      await pool.close();
      await stop(server);
    }
  },
);

// The server answered: whatever it did, it did. Taken for a server that is down, the call would be
// retried, and the tool run again on every retry.
test('an answer that is not a tool result is an error answer, and the server stays in use', async () => {
  const server = await startFailingServer('tools/call', '', { content: 'not a list', isError: 'maybe' });
  const { port } = server.address() as AddressInfo;
  const pool = new McpPool(
    {
      file: 'test',
      servers: [
        {
          name: 'remote',
          transport: 'http',
          url: `http://127.0.0.1:${port}/mcp`,
          headers: {},
          roles: ['coder'],
          tools: null,
        },
      ],
    },
    { restartFirstMs: 3_600_000, restartMaxMs: 3_600_000, connectTimeoutMs: 30_000, log: () => undefined },
  );
  try {
    await pool.start();
    const outcome = await pool.call('remote', 'whoami', {}, { timeoutMs: 30_000 });
    expect(outcome.kind).toBe('error');
    expect(outcome.kind === 'error' && outcome.message).toMatch(/not a tool result/);
    expect(server.asked).toBe(1);
    expect(pool.status()[0]!.ok).toBe(true);
  } finally {
    await pool.close();
    await stop(server);
  }
});
