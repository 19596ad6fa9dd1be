/**
 * The task queues of one host, named from its disk id: `host` takes the steps that read or write
 * a run's files there, `tests` its test runs. Declared here, once, for the worker that polls
 * them (src/repo's HostRuns), the activities that report them and the workflow that sends a
 * run's steps to them.
 */
export interface HostQueues {
  disk: string;
  host: string;
  tests: string;
}

export function hostQueuesOf(disk: string): HostQueues {
  return { disk, host: `aca-host-${disk}`, tests: `aca-tests-${disk}` };
}

/**
 * The task queue of one MCP server's calls: polled only by workers that start that server (their
 * ACA_MCP_CONFIG names it), so a call never lands on a worker without it. Pure, for the workflow.
 */
export function mcpQueueFor(taskQueue: string, server: string): string {
  return `${taskQueue}-mcp-${server}`;
}

/** Every MCP tool's function name starts so; the name of a built-in tool never does. */
export const MCP_FUNCTION_PREFIX = 'mcp__';

/**
 * The server an MCP tool's function name (`mcp__<server>__<tool>`) belongs to, or null for a name
 * that is not an MCP tool's. Server names hold no `__` and are never clipped, so the server is
 * the text up to the next `__` (see src/mcp/tool-names.ts).
 */
export function mcpServerOfFunction(functionName: string): string | null {
  if (!functionName.startsWith(MCP_FUNCTION_PREFIX)) return null;
  const rest = functionName.slice(MCP_FUNCTION_PREFIX.length);
  const end = rest.indexOf('__');
  if (end <= 0) return null;
  return rest.slice(0, end);
}
