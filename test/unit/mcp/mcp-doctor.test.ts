/**
 * `aca doctor`'s lines for ACA_MCP_CONFIG: each server with its tools, or why it cannot start
 * (a warning: workers start without it); a wrong file stops a worker, so it is `missing`. And
 * what `aca worker` says of its servers as it starts.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { formatCheck } from '../../../src/preflight/check-result';
import { checkMcpServers } from '../../../src/preflight/mcp-check';
import { mcpStatusLines } from '../../../src/worker';
import { testServerEntry } from '../../helpers/mcp-test-config';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-mcp-doctor-');

function configFile(value: unknown): string {
  const file = path.join(tempDir(), 'mcp.json');
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('nothing to say without ACA_MCP_CONFIG', async () => {
  expect(await checkMcpServers({ mcpConfigFile: null })).toEqual([]);
});

test('each server, its tools, and what failed', async () => {
  const port = await closedPort();
  const file = configFile({
    mcpServers: {
      tools: testServerEntry(),
      only_lookup: { ...testServerEntry(), tools: ['lookup'], roles: ['planner'] },
      broken: testServerEntry({ MCP_TEST_EXIT_AT_START: '2' }),
      remote: { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer secret-token' } },
    },
  });
  const checks = await checkMcpServers({ mcpConfigFile: file }, 30_000);
  expect(checks.map((c) => [c.name, c.status])).toEqual([
    ['mcp tools', 'ok'],
    ['mcp only_lookup', 'ok'],
    ['mcp broken', 'warn'],
    ['mcp remote', 'warn'],
  ]);
  const lines = checks.map(formatCheck);
  expect(lines[0]).toMatch(/^mcp tools +ok +2 tools: mcp__tools__lookup, mcp__tools__slow_sum$/);
  expect(lines[1]).toMatch(/1 tool: mcp__only_lookup__lookup$/);
  expect(lines[2]).toMatch(
    /stdio server cannot start: the server closed the connection \(exited\?\); its stderr ends: mcp-test-server: told to fail at start; fix: check the "broken" entry of /,
  );
  expect(lines[3]).toMatch(/http server cannot start: .*\(ECONNREFUSED\)/);
  // The operator's header values are never shown.
  expect(lines.join('\n')).not.toContain('secret-token');
});

test('a file that is wrong is named with its key, and would stop a worker', async () => {
  const file = configFile({ mcpServers: { a: { command: 'x', tools: 'lookup' } } });
  const [check] = await checkMcpServers({ mcpConfigFile: file });
  expect(check).toMatchObject({ name: 'mcp', status: 'missing' });
  expect(check!.detail).toContain(`ACA_MCP_CONFIG file ${file}, key "mcpServers.a.tools"`);
});

test('what `aca worker` says of its servers at start: each queue and its tools, or why it is down', () => {
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
    '  MCP server "tools" on "q-mcp-tools": 1 tool (mcp__tools__lookup)',
    '  MCP server "broken" is down, started again in the background: it exited',
  ]);
});
