import { Context, log } from '@temporalio/activity';
import {
  openTurn,
  type ToolCallOutcome,
  type ToolCallSite,
  type TurnSources,
  runAgentStep,
  executeTurnToolCall,
  toChatMessages,
  type OpenTurnInput,
} from '../agents/agent-turn';
import type { InstructionsRequest } from '../agents/turn-context';
import type { ConversationStore, StepDecision } from '../store/conversation-store';
import { FILE_TOOLS, type FileToolName } from '../tools/file-tools';
import type { ChatModel } from '../llm/chat-model';
import type { StreamProgress } from '../llm/stream-answer';
import { toActivityFailure } from '../llm/model-errors';
import { costOf, priceOf, type PriceTable } from '../llm/model-prices';
import { contextBudgetFor } from '../llm/context-window';
import { optionsForModel, type ModelOptionsTable } from '../llm/model-options';
import { estimateTokens } from '../repo-map/repo-map';
import {
  buildTurnMap,
  DEFAULT_TURN_MAP_BUDGETS,
  type TurnMapBudgets,
  type TurnMapRequest,
} from '../repo-map/turn-map';
import { ApplicationFailure } from '@temporalio/common';
import { takeUpConversation } from '../agents/conversation-fork';
import { ConversationNotFoundError } from '../store/conversation-store';
import { FAILURE_TYPES } from '../shared/failure-types';
import { throttledHeartbeat, withHeartbeats } from './heartbeats';
import type { ReportStore } from '../store/report-store';
import {
  DEFAULT_INSTRUCTION_TOKENS,
  type GitTarget,
  type HostRuns,
  type ProjectInstructions,
  readProjectInstructions,
} from '../repo';
import type { RunPlace } from '../shared/run-types';
import type { SandboxMode } from '../shared/types';
import { asCommitFailure, atRecordedCommit, warnInActivity } from './host-steps';
export type { TurnContext } from '../agents/turn-context';
export type { ToolCallOutcome } from '../agents/agent-turn';
export type { DecidedToolCall } from '../store/conversation-store';

/** What opens a turn, as the workflow gives it: the work tree is the host's to name. */
export type TurnOpening = Omit<OpenTurnInput, 'workspace'>;

export interface AgentActivityDeps {
  /** Where conversations are kept (files under ACA_HOME, or Postgres with DATABASE_URL). */
  store: ConversationStore;
  /** Where full test reports are kept, beside the conversations. */
  reports: ReportStore;
  /**
   * The model client, shared by every step: one client keeps its HTTP connections alive between
   * calls. Each step passes the run's own timeout.
   */
  chatModel: ChatModel;
  /** Lessons from failure memory for a Planner's opening step (see createLessonRecall). */
  recallLessons: TurnSources['recallLessons'];
  /**
   * ACA_LOG_PROMPTS: also log what the model was sent and answered. Off by default, because
   * prompts carry the user's task and file contents, which do not belong in shared logs.
   */
  logPrompts: boolean;
  /** Model prices (built-in, with ACA_PRICES over them): each step's cost in dollars. */
  prices: PriceTable;
  /** ACA_MODEL_OPTIONS: per-model options, of which the context window sizes each request. */
  modelOptions?: ModelOptionsTable;
  /**
   * The runs whose files are on this host, which turn openings and file tool calls need; absent
   * where only model steps are taken (a test of them).
   */
  host?: HostRuns;
  /**
   * Token budgets of the repository map in each turn's first message (the Planner's, the others');
   * `false` leaves the map out.
   */
  repositoryMap?: TurnMapBudgets | false;
  /** ACA_RUN_COMMAND: whether this worker offers `run_command`; absent: yes. */
  runCommand?: boolean;
  /** ACA_SANDBOX: without one (`none`) the read-only roles are not offered `run_command`. */
  sandboxMode?: SandboxMode;
  /** The MCP tools this worker's servers (ACA_MCP_CONFIG) offer an agent of a role. */
  mcpTools?: TurnSources['mcpTools'];
}

const MAX_LOGGED_PROMPT_CHARS = 20_000;

export interface AgentStepInput {
  ref: string;
  /** The run's model, whose price the step's cost comes from. */
  model: string;
  stepIndex: number;
  timeoutMs: number;
  /**
   * The turn's conversation as an earlier execution opened it, when a Reset put its opening
   * before the reset point: taken over as it stood at this step (see takeUpConversation).
   */
  openedAs?: string;
}

export interface OpenTurnStepInput {
  /** The conversation to open (idempotent); its workspace is the place's work tree. */
  open: TurnOpening;
  /** Where the run's files are: the repository map reads its work tree. */
  place: RunPlace;
  /** The run's last recorded commit: the step starts from it. */
  headCommit: string;
}

/** An opened turn. */
export interface OpenedTurn {
  /**
   * The conversation opened: under the reference of the execution that ran the step, an earlier
   * one's after a Reset (see AgentStepInput.openedAs).
   */
  ref: string;
  /**
   * The project's instruction files the first message carries (`--instructions` for the user's
   * own), as the Web UI and `aca log` show them; absent when none, or when a retried step found
   * the turn opened already.
   */
  instructions?: string[];
}

/**
 * A step's decision and what it cost (null when the model has no known price); `ref` when the step
 * took its conversation over (given `openedAs`): the conversation it wrote.
 */
export type AgentStepOutcome = StepDecision & { usd: number | null; ref?: string };

export interface ToolCallInput {
  ref: string;
  toolCallId: string;
  /** Where the run's files are. */
  place: RunPlace;
  /** The run's last recorded commit: the step starts from it. */
  headCommit: string;
  /** The workflow execution the call belongs to (see HostRuns.commit). */
  execution?: string;
  /** As in AgentStepInput: the conversation an earlier execution opened for the turn. */
  openedAs?: string;
}

const HEARTBEAT_EVERY_MS = 5_000;
/** A streamed answer's chunks beat at most this often. */
const CHUNK_HEARTBEAT_MIN_MS = 1_000;

/**
 * What an opening turn reads besides its input: reports, lessons, the repository map, and with
 * the run's git directory (`git`, one holding its objects) the project's instructions, each set
 * read reported to `onInstructions`.
 */
export function turnSources(
  deps: AgentActivityDeps,
  git?: GitTarget,
  onInstructions?: (read: ProjectInstructions) => void,
): TurnSources {
  const mapBudgets = deps.repositoryMap ?? DEFAULT_TURN_MAP_BUDGETS;
  return {
    loadReport: (ref) => deps.reports.loadReport(ref),
    recallLessons: deps.recallLessons,
    ...(deps.runCommand === false ? { runCommand: false } : {}),
    ...(deps.sandboxMode === 'none' ? { readOnlyCommands: false } : {}),
    ...(deps.mcpTools ? { mcpTools: deps.mcpTools } : {}),
    ...(git
      ? {
          async projectInstructions(request: InstructionsRequest) {
            const started = performance.now();
            // Never more than a quarter of the model's window: the task and the work need the rest.
            const window = contextBudgetFor(
              request.model,
              optionsForModel(deps.modelOptions ?? {}, request.model),
            ).contextTokens;
            try {
              const read = await readProjectInstructions({
                git,
                baseCommit: request.baseCommit,
                paths: request.paths,
                extra: request.instructions?.text ?? null,
                extraChars: request.instructions?.chars ?? 0,
                budgetTokens: Math.min(DEFAULT_INSTRUCTION_TOKENS, Math.floor(window / 4)),
              });
              log.info('project instructions', {
                files: read.files.map((f) => `${f.path} (${f.tokens} tokens${f.clipped ? ', clipped' : ''})`),
                omitted: read.omitted,
                ms: Math.round(performance.now() - started),
              });
              onInstructions?.(read);
              return read;
            } catch (err) {
              // The turn opens without them rather than fail for good on a repository git cannot read.
              log.warn('project instructions could not be read; the turn opens without them', {
                error: String(err),
              });
              return null;
            }
          },
        }
      : {}),
    ...(mapBudgets
      ? {
          async repositoryMap(request: TurnMapRequest) {
            const started = performance.now();
            try {
              const map = await buildTurnMap(request, mapBudgets);
              log.info('repository map', {
                role: request.role,
                ms: Math.round(performance.now() - started),
                tokens: map ? estimateTokens(map) : 0,
              });
              return map;
            } catch (err) {
              // A hint, not a requirement: the turn opens without it rather than fail.
              log.warn('repository map failed; the turn opens without one', { error: String(err) });
              return null;
            }
          },
        }
      : {}),
  };
}

/**
 * A turn's conversation this worker cannot find does not appear by waiting: it was saved by a
 * worker with another ACA_HOME. The step fails at once, saying so, rather than retry for good.
 */
function asMissingConversation(err: unknown): unknown {
  if (!(err instanceof ConversationNotFoundError)) return err;
  return ApplicationFailure.nonRetryable(
    `${err.message} on this worker: conversations are kept in the ACA_HOME of the worker that opened the turn unless DATABASE_URL names a Postgres database that every worker shares, as workers on more than one host need (docs/scaling.md)`,
    FAILURE_TYPES.conversationMissing,
  );
}

function hostOf(deps: AgentActivityDeps): HostRuns {
  if (!deps.host)
    throw new Error('turn openings and file tools run on a worker with hosts (see createAcaActivities)');
  return deps.host;
}

export function createAgentActivities(deps: AgentActivityDeps) {
  const runFileTool = async (input: ToolCallInput): Promise<ToolCallOutcome> => {
    const host = hostOf(deps);
    const turn = input.ref.slice(input.ref.lastIndexOf('/') + 1);
    return withHeartbeats(HEARTBEAT_EVERY_MS, () =>
      atRecordedCommit(host, input, async (place) => {
        const site: ToolCallSite = {
          workspace: place.workTree,
          // With a store, each change is committed and pushed at once: another host that adopts
          // the run mid-turn finds every file the turn's answers say it wrote.
          ...(host.usesStore
            ? {
                commitChange: (path: string, toolName: string) =>
                  host.commit(place, input.headCommit, {
                    message: `aca: ${turn}: ${toolName} ${path}`,
                    step: `${input.ref}/${input.toolCallId}`,
                    execution: input.execution ?? '',
                    paths: [path],
                    warn: warnInActivity,
                  }),
              }
            : {}),
        };
        try {
          // A turn an earlier execution opened is taken over first; the outcome names the copy.
          if (input.openedAs) {
            await takeUpConversation(deps.store, input.ref, input.openedAs, { call: input.toolCallId });
          }
          const outcome = await executeTurnToolCall(deps.store, input.ref, input.toolCallId, () =>
            Promise.resolve(site),
          );
          return input.openedAs ? { ...outcome, ref: input.ref } : outcome;
        } catch (err) {
          throw asMissingConversation(asCommitFailure(err));
        }
      }),
    );
  };
  return {
    /** Runs on the run's host: the repository map reads its work tree, the instructions its git. */
    async openTurn(input: OpenTurnStepInput): Promise<OpenedTurn> {
      return withHeartbeats(HEARTBEAT_EVERY_MS, () =>
        atRecordedCommit(hostOf(deps), input, async (place) => {
          let instructions: string[] = [];
          const sources = turnSources(deps, { gitDir: place.commonDir }, (read) => {
            instructions = read.files.map((f) => f.path);
          });
          try {
            await openTurn(deps.store, { ...input.open, workspace: place.workTree }, sources);
          } catch (err) {
            throw asMissingConversation(err);
          }
          return { ref: input.open.ref, ...(instructions.length ? { instructions } : {}) };
        }),
      );
    },

    async agentStep(input: AgentStepInput): Promise<AgentStepOutcome> {
      const ctx = Context.current();
      // Chunks beat too, carrying how far the answer has come (the Web UI shows a pending
      // activity's last details). The timer's beats stay: they say the worker is alive while the
      // server has not started answering yet, which on a long prompt can take longer than the
      // heartbeat timeout. A stream that goes silent is ended by the model client after
      // stream_idle_seconds, within this attempt, rather than by the heartbeat timeout, which
      // would start a second attempt while the first still waits on the model.
      const beat = throttledHeartbeat<{ streamed: StreamProgress }>(CHUNK_HEARTBEAT_MIN_MS);
      let streamed: StreamProgress | undefined;
      const model: ChatModel = {
        complete: (request) =>
          deps.chatModel.complete({
            ...request,
            timeoutMs: input.timeoutMs,
            onChunk: (progress) => {
              streamed = { ...progress };
              beat({ streamed });
            },
          }),
      };
      let decision: StepDecision;
      try {
        decision = await withHeartbeats(
          HEARTBEAT_EVERY_MS,
          async () => {
            if (input.openedAs) {
              await takeUpConversation(deps.store, input.ref, input.openedAs, { step: input.stepIndex });
            }
            return runAgentStep(
              deps.store,
              model,
              input.ref,
              input.stepIndex,
              ctx.cancellationSignal,
              (name) => contextBudgetFor(name, optionsForModel(deps.modelOptions ?? {}, name)),
            );
          },
          // The timer's beats keep the stream's progress as the latest details, not blank them.
          () => (streamed ? { streamed } : undefined),
        );
      } catch (err) {
        throw toActivityFailure(asMissingConversation(err), deps.chatModel.endpoint);
      }
      const tokens = ctx.metricMeter.createCounter(
        'aca_tokens',
        'tokens',
        'Model tokens reported by the endpoint',
      );
      tokens.add(decision.usage.prompt, { kind: 'prompt' });
      tokens.add(decision.usage.completion, { kind: 'completion' });
      if (decision.usage.cached) tokens.add(decision.usage.cached, { kind: 'cached_prompt' });
      if (decision.usage.reasoning) tokens.add(decision.usage.reasoning, { kind: 'reasoning' });
      const price = priceOf(deps.prices, input.model);
      const usd = price ? costOf(decision.usage, price) : null;
      // Prometheus counters count whole numbers: dollars are counted in millionths.
      if (usd !== null && usd > 0) {
        ctx.metricMeter
          .createCounter('aca_cost_microdollars', 'microdollars', 'Model cost in millionths of a US dollar')
          .add(Math.round(usd * 1_000_000), { model: input.model });
      }
      log.info('model step', {
        ref: input.ref,
        step: input.stepIndex,
        toolCalls: decision.toolCalls.map((c) => c.name),
        finished: decision.finished !== null,
        promptTokens: decision.usage.prompt,
        completionTokens: decision.usage.completion,
        usd,
      });
      if (deps.logPrompts) {
        const conversation = await deps.store.load(input.ref);
        log.info('model step conversation (ACA_LOG_PROMPTS)', {
          ref: input.ref,
          step: input.stepIndex,
          messages: JSON.stringify(toChatMessages(conversation)).slice(-MAX_LOGGED_PROMPT_CHARS),
        });
      }
      return { ...decision, usd, ...(input.openedAs ? { ref: input.ref } : {}) };
    },

    // One activity per workspace tool, named after it, so each call is retried and shown on its own
    // and the workflow finds a call's activity by the tool's name.
    ...(Object.fromEntries(Object.keys(FILE_TOOLS).map((name) => [name, runFileTool])) as Record<
      FileToolName,
      typeof runFileTool
    >),
  };
}
