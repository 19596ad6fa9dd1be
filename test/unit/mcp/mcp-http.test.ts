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
