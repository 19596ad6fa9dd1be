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

/** The queue of the workers that have the MCP server `server` (ACA_MCP_CONFIG), beside `taskQueue`. */
export function mcpQueueFor(taskQueue: string, server: string): string {
  return `${taskQueue}-mcp-${server}`;
}
