import type { AcaConfig } from '../config';
import { McpConfigFileError, McpPool, readMcpConfigFile, type McpConfig } from '../mcp';
import type { CheckResult } from './check-result';

/** How long the doctor gives each server to start and list its tools. */
const DOCTOR_CONNECT_TIMEOUT_MS = 15_000;
const SHOWN_TOOLS = 12;

/**
 * The MCP servers of ACA_MCP_CONFIG, started as a worker starts them: one line each with its
 * tools, or why it cannot start. A server that cannot start is a warning, since a worker starts
 * without it (and keeps trying); a file that cannot be read or is wrong stops a worker, so that
 * is `missing`. Nothing when ACA_MCP_CONFIG is unset.
 */
export async function checkMcpServers(
  config: Pick<AcaConfig, 'mcpConfigFile'>,
  connectTimeoutMs = DOCTOR_CONNECT_TIMEOUT_MS,
): Promise<CheckResult[]> {
  if (!config.mcpConfigFile) return [];
  let mcpConfig: McpConfig;
  try {
    mcpConfig = readMcpConfigFile(config.mcpConfigFile);
  } catch (err) {
    if (!(err instanceof McpConfigFileError)) throw err;
    return [
      {
        name: 'mcp',
        status: 'missing',
        detail: err.message,
        fix: 'correct the file, or unset ACA_MCP_CONFIG',
      },
    ];
  }
  if (mcpConfig.servers.length === 0) {
    return [{ name: 'mcp', status: 'warn', detail: `${mcpConfig.file} names no server` }];
  }
  // Started once: a server that fails here is reported, not started again.
  const pool = new McpPool(mcpConfig, {
    connectTimeoutMs,
    restartFirstMs: 3_600_000,
    restartMaxMs: 3_600_000,
    log: () => undefined,
  });
  try {
    await pool.start();
    return pool.status().map((s): CheckResult => {
      const name = `mcp ${s.server}`;
      if (!s.ok) {
        return {
          name,
          status: 'warn',
          detail: `${s.transport} server cannot start: ${s.error ?? 'no reason given'}`,
          fix: `check the "${s.server}" entry of ${mcpConfig.file}`,
        };
      }
      const shown = s.tools.slice(0, SHOWN_TOOLS).join(', ');
      const more = s.tools.length > SHOWN_TOOLS ? `, … (${s.tools.length - SHOWN_TOOLS} more)` : '';
      return {
        name,
        status: s.tools.length ? 'ok' : 'warn',
        detail: s.tools.length
          ? `${s.tools.length} tool${s.tools.length === 1 ? '' : 's'}: ${shown}${more}`
          : 'offers no tool (or none its `tools` list allows)',
      };
    });
  } finally {
    await pool.close();
  }
}
