import { log, workflowInfo } from '@temporalio/workflow';
import type { DecidedToolCall, ToolCallInput, ToolCallOutcome } from '../activities/agent-activities';
import type { AgentRole } from '../shared/types';
import { mcpQueueFor } from '../shared/host-queues';
import { mcpActivities, type HostActivities } from './activity-options';
import type { RunContext } from './run-context';

/**
 * One tool call where its kind runs: a file tool on the host's files queue, `run_command` on its
 * test queue (a test slot), an MCP tool on a worker with its server. An MCP call that could not be
 * made stays unanswered ("not executed"); the turn goes on.
 */
export async function runToolCall(
  run: RunContext,
  role: AgentRole,
  call: DecidedToolCall,
  input: Omit<ToolCallInput, 'place' | 'headCommit'>,
): Promise<ToolCallOutcome> {
  const summary = `${role} · ${call.name}${call.target ? ` ${call.target}` : ''}`;
  switch (call.kind) {
    case 'file':
      return run.onHost((host) =>
        host.files[call.name].executeWithOptions({ summary }, [{ ...input, ...run.hostStep()! }]),
      );
    case 'command': {
      const { testSetup: setup, protectedPaths, acceptanceCommit } = run.work;
      const sandbox = { setup, protectedPaths, acceptanceCommit, testsDir: run.input.testsDir };
      const runCommand = (host: HostActivities) =>
        host.testing.runCommand.executeWithOptions({ summary }, [
          { ...input, ...sandbox, ...run.hostStep()! },
        ]);
      return run.onHost(runCommand, 'tests');
    }
    case 'mcp':
      try {
        const mcp = mcpActivities(mcpQueueFor(workflowInfo().taskQueue, call.server));
        return await mcp.callMcpTool.executeWithOptions({ summary }, [input]);
      } catch (err) {
        log.warn('an MCP tool call could not be made', { tool: call.name, error: String(err) });
        return { ok: false, error: `the MCP server ${call.server} could not be reached` };
      }
  }
}
