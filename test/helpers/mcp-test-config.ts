/** How the tests start the stdio MCP server of mcp-test-server.mjs, as an ACA_MCP_CONFIG entry. */
import * as path from 'node:path';
import type { McpServerConfig } from '../../src/mcp';

export const MCP_TEST_SERVER = path.join(__dirname, 'mcp-test-server.mjs');

/** The test server's entry: run with this Node, with the misbehaviour `env` asks for. */
export function testServerEntry(env: Record<string, string> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [MCP_TEST_SERVER], env };
}

/** The same, parsed: a configured stdio server named `name`. */
export function testServerConfig(
  name: string,
  env: Record<string, string> = {},
  extra: Partial<McpServerConfig> = {},
): McpServerConfig {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [MCP_TEST_SERVER],
    env,
    cwd: path.dirname(MCP_TEST_SERVER),
    roles: ['coder', 'reflector'],
    tools: null,
    ...extra,
  } as McpServerConfig;
}
