import type OpenAI from 'openai';
import type { AgentRole, Lesson, TestRunReport } from '../shared/types';
import type { ChatAnswer, ChatModel } from '../llm/chat-model';
import { contextBudgetFor, type ContextBudget } from '../llm/context-window';
import { contextLengthExceeded } from '../llm/model-errors';
import { parseTextToolCalls } from '../llm/text-tool-calls';
import { isFileToolName, type ToolResult } from '../tools/file-tools';
import { isToolName, parseToolArguments, TOOLS } from '../tools/registry';
import type { Tool } from '../tools/tool';
import { AGENT_SPECS } from './agent-specs';
import { chooseTrimmed, estimateTokens, trimmedResult } from './context-trim';
import type {
  Conversation,
  ConversationStore,
  OfferedMcpTool,
  StepDecision,
} from '../store/conversation-store';
import type { TurnMapRequest } from '../repo-map/turn-map';
import { turnMapRequest } from './turn-map-request';
import type { ProjectInstructions } from '../repo';
import type { InstructionsRequest, OpenTurnInput } from './turn-context';
import { buildUserMessage } from './user-message';
import { printableLine } from '../shared/terminal-text';
import { parseMcpArguments } from './mcp-arguments';
import { turnTools } from './offered-tools';

export type { OpenTurnInput } from './turn-context';
export {
  executeTurnToolCall,
  partlyReadFiles,
  type ToolCallOutcome,
  type ToolCallSite,
} from './turn-tool-call';

/** Where an opening turn reads what its context only refers to. */
export interface TurnSources {
  loadReport(ref: string): Promise<TestRunReport | null>;
  /** Never throws: without an answer from failure memory the turn opens without lessons. */
  recallLessons(query: { workflowId: string; task: string }): Promise<Lesson[]>;
  /** Never throws: the "Repository map" section of the first message, or null for none. */
  repositoryMap?(request: TurnMapRequest): Promise<string | null>;
  /** Whether this worker offers `run_command` (ACA_RUN_COMMAND); absent: yes. */
  runCommand?: boolean;
  /**
   * Whether this worker can hold a command to a read-only work tree (it has a sandbox); absent:
   * yes. Without, the roles whose commands only look (AgentSpec.commandsWrite) are not offered
   * `run_command`: nothing would keep their commands from writing.
   */
  readOnlyCommands?: boolean;
  /** The MCP tools this worker's servers offer an agent of `role`. */
  mcpTools?(role: AgentRole): OfferedMcpTool[];
  /**
   * Never throws: the project's instructions (AGENTS.md and the like at the base commit, the
   * user's own) for the first message, or null for none.
   */
  projectInstructions?(request: InstructionsRequest): Promise<ProjectInstructions | null>;
}

/** Creates the turn's conversation unless a retried activity already did. */
export async function openTurn(
  store: ConversationStore,
  input: OpenTurnInput,
  sources: TurnSources,
): Promise<string> {
  if (await store.exists(input.ref)) return input.ref;
  const spec = AGENT_SPECS[input.context.role];
  const report = input.context.testReportRef ? await sources.loadReport(input.context.testReportRef) : null;
  const context = input.recallLessons
    ? { ...input.context, lessons: await sources.recallLessons(input.recallLessons) }
    : input.context;
  // Built here, inside the activity, so the map is stored with the conversation (a retry above
  // reuses it) and never travels through workflow history.
  const map = sources.repositoryMap
    ? await sources.repositoryMap(await turnMapRequest(store, input, report))
    : null;
  const { baseCommit } = input.context;
  const instructions =
    sources.projectInstructions && baseCommit
      ? await sources.projectInstructions({
          model: input.model,
          baseCommit,
          paths: input.context.planFiles ?? input.context.plan?.files ?? [],
          instructions: input.context.instructions ?? null,
        })
      : null;
  await store.save({
    ref: input.ref,
    role: spec.role,
    model: input.model,
    language: input.context.language,
    workspace: input.workspace,
    protectedPaths: input.context.protectedPaths,
    entries: [
      { kind: 'system', content: spec.systemPrompt },
      { kind: 'user', content: buildUserMessage(context, report, map, instructions?.text || null) },
    ],
    toolResults: {},
    steps: [],
    offered: {
      runCommand:
        input.runCommand !== false &&
        sources.runCommand !== false &&
        (spec.commandsWrite || sources.readOnlyCommands !== false),
      mcp: sources.mcpTools?.(spec.role) ?? [],
    },
  });
  return input.ref;
}

/**
 * The chat messages of a conversation, every tool call followed by its answer in call order. The
 * answers of `trimmed` calls are sent as stubs (see chooseTrimmed); the stored ones stay whole.
 */
export function toChatMessages(
  conversation: Conversation,
  trimmed: ReadonlySet<string> = new Set(),
): OpenAI.Chat.ChatCompletionMessageParam[] {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
  for (const entry of conversation.entries) {
    if (entry.kind === 'system' || entry.kind === 'user') {
      messages.push({ role: entry.kind, content: entry.content });
      continue;
    }
    messages.push({
      role: 'assistant',
      content: entry.content,
      ...(entry.toolCalls.length
        ? {
            tool_calls: entry.toolCalls.map((call) => ({
              id: call.id,
              type: 'function' as const,
              function: { name: call.name, arguments: call.arguments },
            })),
          }
        : {}),
    });
    for (const call of entry.toolCalls) {
      const stored: ToolResult = conversation.toolResults[call.id] ?? {
        ok: false,
        error: 'this call was not executed',
      };
      const result = trimmed.has(call.id) ? trimmedResult(call, stored) : stored;
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  return messages;
}

/** Told to the model for a call its cut answer left incomplete; never executed. */
const CUT_CALL_ERROR =
  'not executed: your answer was cut at its output limit (finish_reason "length") before this call\'s arguments were complete. Change existing files with edit_file, and write a large file in smaller pieces: create_file with the first part, then edit_file to add the rest.';

/**
 * Calls taken from one answer; the rest are answered, never executed. Each call is an activity
 * and an answer kept in the conversation, which is stored whole after every call: an answer of a
 * thousand run_command calls would otherwise be a thousand commands, their outputs in the report
 * store, and a conversation rewritten a thousand times as it grows.
 */
export const MAX_CALLS_PER_ANSWER = 32;

const TOO_MANY_CALLS_ERROR = `not executed: at most ${MAX_CALLS_PER_ANSWER} tool calls of one answer are executed; make this call again in your next answer if you still need it`;

/**
 * The answer's calls, each with an id no other call of the conversation has. The id is the key of
 * a call's answer, and the model's to choose: some servers omit it or number every answer's calls
 * from zero, and a call reusing an earlier call's id would be answered with that call's result,
 * never executed (or, as another tool's call, fail its activity on every retry).
 */
function withUniqueIds(
  conversation: Conversation,
  received: Array<{ id: string; name: string; arguments: string }>,
  stepIndex: number,
): Array<{ id: string; name: string; arguments: string }> {
  const seenIds = new Set(
    conversation.entries
      .flatMap((entry) => (entry.kind === 'assistant' ? entry.toolCalls : []))
      .map((c) => c.id),
  );
  return received.map((call, index) => {
    let id = call.id || `call_${stepIndex}_${index}`;
    if (seenIds.has(id)) id = `${id}_${index}`;
    for (let n = 1; seenIds.has(id); n++) id = `${call.id || 'call'}_${stepIndex}_${index}_${n}`;
    seenIds.add(id);
    return { ...call, id };
  });
}

function cutAnswerMessage(finishTool: string): string {
  return `Your last answer was cut at its output limit before it was complete; what was cut off was not executed. Keep each answer short: change existing files with edit_file, and write a large file in smaller pieces (create_file with the first part, then edit_file to add the rest). Your turn ends when you call ${finishTool}.`;
}

/**
 * Sends the conversation, trimmed to the budget. A server that still finds it too long gets one
 * more try, trimmed to the window it states (or half the budget), within this same attempt: the
 * request is not wrong, only too big, so failing the run for it would be wrong.
 */
async function completeWithinBudget(
  model: ChatModel,
  conversation: Conversation,
  tools: OpenAI.Chat.ChatCompletionTool[],
  budget: ContextBudget,
  signal: AbortSignal | undefined,
): Promise<ChatAnswer> {
  const window = Math.min(budget.contextTokens, conversation.contextTokens ?? Infinity);
  const fitted = (contextTokens: number) => {
    // The answer's room as configured, but never more than half of a window a server cut down.
    const promptTokens = contextTokens - Math.min(budget.answerTokens, Math.floor(contextTokens / 2));
    const whole = toChatMessages(conversation);
    const trimmed = chooseTrimmed(conversation, estimateTokens(whole, tools), promptTokens);
    return { trimmed, messages: trimmed.size ? toChatMessages(conversation, trimmed) : whole };
  };
  const first = fitted(window);
  const ask = (messages: OpenAI.Chat.ChatCompletionMessageParam[]) =>
    model.complete({ model: conversation.model, messages, tools, signal });
  try {
    return await ask(first.messages);
  } catch (err) {
    const exceeded = contextLengthExceeded(err);
    if (!exceeded) throw err;
    // A stated window is the server's own count; ours is an estimate, so keep a tenth spare.
    const smaller =
      exceeded.statedLimit !== null && exceeded.statedLimit < window
        ? Math.floor(exceeded.statedLimit * 0.9)
        : Math.floor(window / 2);
    const second = fitted(smaller);
    // Nothing more to trim: the same request would be refused the same way.
    if (second.trimmed.size === first.trimmed.size) throw err;
    const answer = await ask(second.messages);
    conversation.contextTokens = smaller;
    return answer;
  }
}

/**
 * One model call of a turn. The answer is stored with the conversation before
 * the decision is returned, so a retry after a crash replays the stored
 * decision instead of paying for the same model call twice.
 */
export async function runAgentStep(
  store: ConversationStore,
  model: ChatModel,
  ref: string,
  stepIndex: number,
  signal?: AbortSignal,
  budgetFor: (model: string) => ContextBudget = (name) => contextBudgetFor(name),
): Promise<StepDecision> {
  const conversation = await store.load(ref);
  const recorded = conversation.steps[stepIndex];
  if (recorded) return recorded;
  if (stepIndex !== conversation.steps.length) {
    throw new Error(
      `step ${stepIndex} of ${ref} requested but ${conversation.steps.length} steps are recorded`,
    );
  }
  const spec = AGENT_SPECS[conversation.role];
  const tools = turnTools(conversation);
  const answer = await completeWithinBudget(
    model,
    conversation,
    tools.definitions,
    budgetFor(conversation.model),
    signal,
  );

  const decision: StepDecision = {
    toolCalls: [],
    finished: null,
    progress: false,
    usage: answer.usage,
    note: null,
  };
  // A cut answer may end inside a call: nothing of it is repaired, so nothing cut is guessed at.
  const cut = answer.finishReason === 'length';
  const json = { repair: !cut };
  let content = answer.content;
  let received: Array<{ id: string; name: string; arguments: string }> = answer.toolCalls;
  // Calls in text only from a model that writes them so, never beside native ones.
  if (received.length === 0 && content && answer.toolCallsInText === true) {
    const written = parseTextToolCalls(content, tools.names, json);
    if (written.calls.length) {
      received = written.calls.map((call, index) => ({ id: `call_text_${stepIndex}_${index}`, ...call }));
      content = written.rest;
    }
  }
  const calls = withUniqueIds(conversation, received, stepIndex);
  conversation.entries.push({ kind: 'assistant', content, toolCalls: calls });

  let cutCalls = 0;
  for (const [index, call] of calls.entries()) {
    if (decision.finished !== null) {
      conversation.toolResults[call.id] = {
        ok: false,
        error: `not executed: the turn already ended with ${spec.finishTool}`,
      };
      continue;
    }
    if (index >= MAX_CALLS_PER_ANSWER) {
      conversation.toolResults[call.id] = { ok: false, error: TOO_MANY_CALLS_ERROR };
      continue;
    }
    const mcpTool = tools.mcp.get(call.name);
    if (mcpTool) {
      const parsed = parseMcpArguments(call.arguments, json);
      if (!parsed.ok) {
        conversation.toolResults[call.id] = { ok: false, error: parsed.error };
        continue;
      }
      if (parsed.repaired !== undefined) call.arguments = parsed.repaired;
      decision.progress = true;
      decision.toolCalls.push({
        kind: 'mcp',
        id: call.id,
        name: call.name,
        target: '',
        server: mcpTool.server,
      });
      continue;
    }
    if (!isToolName(call.name) || !tools.builtIn.includes(call.name)) {
      conversation.toolResults[call.id] = {
        ok: false,
        error: `unknown tool "${call.name}"; the tools you have are: ${tools.names.join(', ')}`,
      };
      continue;
    }
    const parsed = parseToolArguments(call.name, call.arguments, json);
    if (!parsed.ok) {
      const wasCut = cut && parsed.kind === 'json';
      if (wasCut) cutCalls += 1;
      conversation.toolResults[call.id] = { ok: false, error: wasCut ? CUT_CALL_ERROR : parsed.error };
      continue;
    }
    // Stored as repaired, so the call's activity and the model's next request see valid JSON.
    if (parsed.repaired !== undefined) call.arguments = parsed.repaired;
    decision.progress = true;
    const tool = TOOLS[call.name] as Tool;
    if (tool.kind === 'finishing') {
      decision.finished = tool.finish(parsed.args);
      conversation.toolResults[call.id] = { ok: true };
    } else if (tool.kind === 'command') {
      decision.toolCalls.push({
        kind: 'command',
        id: call.id,
        name: 'run_command',
        target: printableLine(tool.target(parsed.args)),
      });
    } else if (isFileToolName(call.name)) {
      decision.toolCalls.push({
        kind: 'file',
        id: call.id,
        name: call.name,
        // The step's summary in history, which the Web UI shows as it is: hidden characters escaped.
        target: printableLine(tool.target(parsed.args)),
      });
    }
  }

  if (cut) decision.note = 'the answer was cut at the output limit';
  if (cut && cutCalls === 0 && decision.finished === null) {
    // The cut fell in the text or in a call written as text: no tool answer says so, this does.
    conversation.entries.push({ kind: 'user', content: cutAnswerMessage(spec.finishTool) });
  } else if (calls.length === 0) {
    decision.note = 'the model answered without calling a tool';
    conversation.entries.push({
      kind: 'user',
      content: `Please continue by calling one of your tools. Your turn ends when you call ${spec.finishTool}.`,
    });
  }
  conversation.steps.push(decision);
  await store.save(conversation);
  return decision;
}
