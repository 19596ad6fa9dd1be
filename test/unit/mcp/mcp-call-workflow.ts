/**
 * A workflow for mcp-worker.test.ts only: makes MCP tool calls as aca's workflow does, each an
 * activity on the queue of the workers that keep the call's server (mcpQueueFor), retried while
 * the server is down.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { McpToolCallInput } from '../../../src/activities/mcp-activities';
import type { ToolCallOutcome } from '../../../src/agents/agent-turn';
import { mcpQueueFor } from '../../../src/shared/host-queues';

type CallMcpTool = (input: McpToolCallInput) => Promise<ToolCallOutcome>;

export async function mcpCallWorkflow(
  taskQueue: string,
  calls: Array<{ input: McpToolCallInput; server: string }>,
): Promise<ToolCallOutcome[]> {
  const outcomes: ToolCallOutcome[] = [];
  for (const { input, server } of calls) {
    const { callMcpTool } = proxyActivities<{ callMcpTool: CallMcpTool }>({
      taskQueue: mcpQueueFor(taskQueue, server),
      startToCloseTimeout: '30s',
      heartbeatTimeout: '20s',
      retry: { initialInterval: '200ms', backoffCoefficient: 1.5, maximumAttempts: 30 },
    });
    outcomes.push(await callMcpTool(input));
  }
  return outcomes;
}
