import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ToolCallOutcome } from '../agents/agent-turn';
import { clipMiddle } from '../shared/clip-text';
import { takeUpConversation } from '../agents/conversation-fork';
import {
  McpServerUnavailableError,
  mcpToolAnswer,
  offeredMcpTools,
  UnknownMcpServerError,
  type McpCallOutcome,
  type McpPool,
} from '../mcp';
import {
  ConversationNotFoundError,
  type Conversation,
  type ConversationStore,
  type OfferedMcpTool,
} from '../store/conversation-store';
import type { AgentRole } from '../shared/types';
import { FAILURE_TYPES } from '../shared/failure-types';
import { parseModelJson } from '../shared/model-json';
import type { ToolResult } from '../tools/tool';
import type { ToolCallInput } from './agent-activities';
import { withHeartbeats } from './heartbeats';

/**
 * The activity of an MCP tool call, run on the task queue of the worker(s) that keep its server
 * (mcpQueueFor). Like a file tool's call, its answer is stored in the turn's conversation before
 * the activity returns, so a call that answered is never made again, whatever is retried or
 * replayed. A server that is down fails the attempt (Temporal retries it, perhaps on another
 * worker); a tool that fails, does not answer in time or answers more than aca reads is an
 * answer the model reads, and the run goes on.
 */

/** How long an MCP tool may take to answer when the workflow names no time of its own. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;

export interface McpActivityDeps {
  store: ConversationStore;
  pool: Pick<McpPool, 'resolve' | 'call'>;
  /** How long a call may take before the model is told it did not answer. */
  callTimeoutMs?: number;
}

/**
 * A turn's MCP tool call; a file tool's input (ToolCallInput) will do, since the work tree it
 * names is not needed here.
 */
export interface McpToolCallInput extends Pick<ToolCallInput, 'ref' | 'toolCallId' | 'openedAs'> {
  place?: ToolCallInput['place'];
  execution?: string;
  /** How long the tool may take; keep it under the activity's start-to-close timeout. */
  timeoutMs?: number;
}

const HEARTBEAT_EVERY_MS = 5_000;

export function createMcpActivities(deps: McpActivityDeps) {
  return {
    async callMcpTool(input: McpToolCallInput): Promise<ToolCallOutcome> {
      const signal = Context.current().cancellationSignal;
      return withHeartbeats(HEARTBEAT_EVERY_MS, async () => {
        try {
          if (input.openedAs) {
            await takeUpConversation(deps.store, input.ref, input.openedAs, { call: input.toolCallId });
          }
          const outcome = await answerCall(deps, input, signal);
          return input.openedAs ? { ...outcome, ref: input.ref } : outcome;
        } catch (err) {
          throw asActivityFailure(err);
        }
      });
    },
  };
}

async function answerCall(
  deps: McpActivityDeps,
  input: McpToolCallInput,
  signal: AbortSignal,
): Promise<ToolCallOutcome> {
  const conversation = await deps.store.load(input.ref);
  const done = conversation.toolResults[input.toolCallId];
  if (done) return outcomeOf(done);
  const call = conversation.entries
    .flatMap((entry) => (entry.kind === 'assistant' ? entry.toolCalls : []))
    .find((c) => c.id === input.toolCallId);
  if (!call) {
    throw ApplicationFailure.nonRetryable(`tool call ${input.toolCallId} is not part of ${input.ref}`);
  }
  const timeoutMs = input.timeoutMs ?? deps.callTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS;
  const result = await runCall(deps, call, () => targetOf(deps, conversation, call.name), timeoutMs, signal);
  conversation.toolResults[input.toolCallId] = result;
  await deps.store.save(conversation);
  return outcomeOf(result);
}

/**
 * The server and tool the turn was offered under `name` as it opened: the call goes where the
 * offer said, even if this worker lists the server's tools otherwise now. A name the turn was not
 * offered is unknown, though a server here has it: a role not given a server's tools (its
 * `roles`) cannot reach them by naming one. Only a conversation kept before turns kept their
 * offer has the name looked up among this worker's servers.
 */
function targetOf(
  deps: McpActivityDeps,
  conversation: Conversation,
  name: string,
): { server: string; tool: string } | null {
  if (!conversation.offered) return deps.pool.resolve(name);
  const tool = conversation.offered.mcp.find((t) => t.name === name);
  return tool ? { server: tool.server, tool: tool.tool } : null;
}

async function runCall(
  deps: McpActivityDeps,
  call: { name: string; arguments: string },
  targetOfCall: () => { server: string; tool: string } | null,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ToolResult> {
  const unknown: ToolResult = {
    ok: false,
    error: `unknown tool "${call.name}": no MCP server here offers it`,
  };
  // Throws McpServerUnavailableError while the server is down: its tools are unknown then.
  const target = targetOfCall();
  if (!target) return unknown;
  const parsed = parseModelJson(call.arguments || '{}', { repair: true });
  if (!parsed.ok) return { ok: false, error: `the arguments are ${parsed.error}` };
  const args = parsed.value;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { ok: false, error: 'the arguments must be a JSON object' };
  }
  const started = performance.now();
  let outcome: McpCallOutcome;
  try {
    outcome = await deps.pool.call(target.server, target.tool, args as Record<string, unknown>, {
      timeoutMs,
      signal,
    });
  } catch (err) {
    if (err instanceof UnknownMcpServerError) return unknown;
    throw err;
  }
  log.info('MCP call', {
    server: target.server,
    tool: target.tool,
    outcome: outcome.kind,
    ms: Math.round(performance.now() - started),
  });
  if (outcome.kind === 'timeout') {
    return {
      ok: false,
      error: `the tool did not answer within ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`} and was given up (it may have acted before that)`,
    };
  }
  if (outcome.kind === 'error')
    return { ok: false, error: `the MCP server refused the call: ${outcome.message}` };
  // An answer too large is the call's answer, not a server that is down: retried, the call would
  // be made again and answered as large again.
  if (outcome.kind === 'too-large') return { ok: false, error: outcome.message };
  return mcpToolAnswer(outcome.result);
}

/** The error an outcome carries into workflow history; the whole one is in the conversation. */
const MAX_OUTCOME_ERROR_CHARS = 1_000;

function outcomeOf(result: ToolResult): ToolCallOutcome {
  return result.ok ? { ok: true } : { ok: false, error: clipMiddle(result.error, MAX_OUTCOME_ERROR_CHARS) };
}

function asActivityFailure(err: unknown): unknown {
  if (err instanceof McpServerUnavailableError) {
    return ApplicationFailure.retryable(err.message, FAILURE_TYPES.mcpServerUnavailable);
  }
  if (err instanceof ConversationNotFoundError) {
    return ApplicationFailure.nonRetryable(
      `${err.message} on this worker: an MCP call's worker must share the conversations of the run's workers (DATABASE_URL, or the same ACA_HOME)`,
      FAILURE_TYPES.conversationMissing,
    );
  }
  return err;
}

/** The MCP workers' activities, as a workflow proxies them. */
export type McpActivities = ReturnType<typeof createMcpActivities>;

/**
 * What a turn opened on this worker is offered of its MCP servers: each tool under the name the
 * model calls, with the server's schema, kept with the conversation.
 */
export function mcpToolsForTurns(pool: McpPool): (role: AgentRole) => OfferedMcpTool[] {
  return offeredMcpTools(pool);
}
