/**
 * ACA_MCP_CONFIG: the `mcpServers` shape, with every mistake named by file and key, and a stdio
 * server's environment holding the basics and the file's `env`, never the worker's secrets.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  McpConfigFileError,
  parseMcpConfig,
  readMcpConfigFile,
  stdioEnvironment,
  type StdioServerConfig,
} from '../../../src/mcp';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-mcp-config-');

function problem(value: unknown): { key: string; problem: string; message: string } {
  try {
    parseMcpConfig('/etc/aca/mcp.json', value);
  } catch (err) {
    expect(err).toBeInstanceOf(McpConfigFileError);
    const e = err as McpConfigFileError;
    return { key: e.key, problem: e.problem, message: e.message };
  }
  throw new Error('expected the configuration to be refused');
}

test('a stdio and an HTTP server, with the defaults filled in', () => {
  const config = parseMcpConfig('/etc/aca/f.json', {
    mcpServers: {
      search: { command: 'npx', args: ['-y', 'srv'], env: { TOKEN: 't' } },
      'docs-1': {
        url: 'https://mcp.example/mcp',
        headers: { Authorization: 'Bearer x' },
        roles: ['planner'],
        tools: ['find'],
      },
    },
  });
  expect(config.servers).toEqual([
    {
      name: 'search',
      transport: 'stdio',
      command: 'npx',
      args: ['-y', 'srv'],
      env: { TOKEN: 't' },
      // Started in the file's folder, never in the worker's.
      cwd: '/etc/aca',
      roles: ['coder', 'reflector'],
      tools: null,
    },
    {
      name: 'docs-1',
      transport: 'http',
      url: 'https://mcp.example/mcp',
      headers: { Authorization: 'Bearer x' },
      roles: ['planner'],
      tools: ['find'],
    },
  ]);
});

test.each([
  [{ servers: {} }, 'mcpServers', 'must be an object of servers by name'],
  [{ mcpServers: {}, servers: {} }, 'servers', 'is not a key aca knows'],
  [{ mcpServers: { a: { command: 'x', cwd: '/' } } }, 'mcpServers.a.cwd', 'is not a key aca knows'],
  [{ mcpServers: { a: { command: 'x', url: 'http://h' } } }, 'mcpServers.a', 'has both `command`'],
  [{ mcpServers: { a: { args: [] } } }, 'mcpServers.a', 'needs `command`'],
  [{ mcpServers: { a: { command: 'x', env: { N: 1 } } } }, 'mcpServers.a.env.N', 'must be a string'],
  [{ mcpServers: { a: { command: 'x', roles: ['coder', 'boss'] } } }, 'mcpServers.a.roles.1', ''],
  [{ mcpServers: { a: { command: 'x', roles: [] } } }, 'mcpServers.a.roles', 'names no role'],
  [{ mcpServers: { a: { command: 'x', tools: [] } } }, 'mcpServers.a.tools', 'allows no tool'],
  [{ mcpServers: { a: { url: 'file:///etc/passwd' } } }, 'mcpServers.a.url', 'is not an http(s) URL'],
  [
    { mcpServers: { a: { url: 'http://h', headers: { X: ['y'] } } } },
    'mcpServers.a.headers.X',
    'must be a string',
  ],
  [{ mcpServers: { 'a b': { command: 'x' } } }, 'mcpServers.a b', 'a server name is'],
  [{ mcpServers: { a__b: { command: 'x' } } }, 'mcpServers.a__b', 'no `__`'],
  [{ mcpServers: { _a: { command: 'x' } } }, 'mcpServers._a', 'a server name is'],
  [{ mcpServers: { ['s'.repeat(33)]: { command: 'x' } } }, `mcpServers.${'s'.repeat(33)}`, 'at most 32'],
  [{ mcpServers: { a: 'npx srv' } }, 'mcpServers.a', 'must be an object'],
])('refuses %j at key %s', (value, key, says) => {
  const found = problem(value);
  expect(found.key).toBe(key);
  expect(found.problem).toContain(says);
  expect(found.message).toMatch(/^ACA_MCP_CONFIG file \/etc\/aca\/mcp\.json, key "/);
});

test('a file that cannot be read or is not JSON is named', () => {
  const dir = tempDir();
  expect(() => readMcpConfigFile(path.join(dir, 'none.json'))).toThrow(
    /ACA_MCP_CONFIG file .*none\.json: cannot be read \(ENOENT\)/,
  );
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{"mcpServers": ');
  expect(() => readMcpConfigFile(bad)).toThrow(/bad\.json: is not JSON/);
  const good = path.join(dir, 'good.json');
  fs.writeFileSync(good, JSON.stringify({ mcpServers: { a: { command: 'x' } } }));
  expect(readMcpConfigFile(good).servers.map((s) => s.name)).toEqual(['a']);
});

test("a stdio server's environment: the basics and the file's env, none of the worker's secrets", () => {
  const server = parseMcpConfig('/f', {
    mcpServers: { a: { command: 'x', env: { API_TOKEN: 'from-file', HOME: '/srv' } } },
  }).servers[0] as StdioServerConfig;
  const env = stdioEnvironment(server, {
    PATH: '/usr/bin',
    HOME: '/root',
    LANG: 'C.UTF-8',
    OPENAI_API_KEY: 'sk-secret',
    DATABASE_URL: 'postgres://u:p@h/db',
    TEMPORAL_TLS_KEY: 'k',
    AWS_SECRET_ACCESS_KEY: 'a',
    SHELL: '() { evil; }',
  });
  expect(env).toEqual({ PATH: '/usr/bin', HOME: '/srv', LANG: 'C.UTF-8', API_TOKEN: 'from-file' });
});
