import { log, workflowInfo } from '@temporalio/workflow';
import type { ToolCallInput, ToolCallOutcome } from '../activities/agent-activities';
import type { DecidedToolCall } from '../store/conversation-store';
import type { AgentRole } from '../shared/types';
import { mcpQueueFor } from '../shared/host-queues';
import { mcpActivities } from './activity-options';
import type { RunContext } from './run-context';

/**
 * Runs one tool call a model step decided, where its kind runs: a file tool on the host's files
 * queue, `run_command` on the host's test queue (a test slot, the run's sandbox), an MCP tool on
 * a worker that has its server. An MCP call that could not be made is told to the model as not
 * executed (its conversation holds no answer) and the turn goes on: a team's server being down
 * is no reason to end a run.
 */
export async function runToolCall(
  run: RunContext,
  role: AgentRole,
  call: DecidedToolCall,
  input: Omit<ToolCallInput, 'place'>,
): Promise<ToolCallOutcome> {
  const summary = `${role} · ${call.name}${call.target ? ` ${call.target}` : ''}`;
  switch (call.kind) {
    case 'file':
      return run.onHost((host) =>
        host.files[call.name].executeWithOptions({ summary }, [{ ...input, place: run.place()! }]),
      );
    case 'command':
      return run.onHost(
        (host) =>
          host.testing.runCommand.executeWithOptions({ summary }, [
            {
              ...input,
              place: run.place()!,
              setup: run.work.testSetup!,
              protectedPaths: run.work.protectedPaths,
              acceptanceCommit: run.work.acceptanceCommit,
              testsDir: run.input.testsDir,
            },
          ]),
        'tests',
      );
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
