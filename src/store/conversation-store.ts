import { AcaError } from '../shared/errors';
import { JsonFiles } from './json-files';
import type { AgentRole, Language, TokenUsage, TurnFinish } from '../shared/types';
import type { FileToolName, ToolResult } from '../tools/file-tools';

export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: string;
}

export type ConversationEntry =
  | { kind: 'system'; content: string }
  | { kind: 'user'; content: string }
  | { kind: 'assistant'; content: string | null; toolCalls: ToolCallRecord[] };

/**
 * A tool call a step decided to run, by where it runs: a file tool on the host's files queue (an
 * activity named after the tool), `run_command` on the host's test queue, an MCP tool on the
 * queue of the workers that have its server.
 */
export type DecidedToolCall =
  | { kind: 'file'; id: string; name: FileToolName; target: string }
  | { kind: 'command'; id: string; name: 'run_command'; target: string }
  | { kind: 'mcp'; id: string; name: string; target: string; server: string };

/** An MCP server's tool as a turn's model is offered it. */
export interface OfferedMcpTool {
  /** The function name the model calls (`mcp__<server>__<tool>`, within the chat API's rules). */
  name: string;
  server: string;
  tool: string;
  description: string;
  /** The server's JSON schema of the tool's arguments. */
  parameters: Record<string, unknown>;
}

/** The tools a turn is offered beyond its role's fixed ones, decided once as the turn opens. */
export interface OfferedTools {
  runCommand: boolean;
  mcp: OfferedMcpTool[];
}

/** What a step decided, kept so that a retried step never asks the model again. */
export interface StepDecision {
  /** The tool calls to run, in order; each one is an activity of its own. */
  toolCalls: DecidedToolCall[];
  finished: TurnFinish | null;
  progress: boolean;
  usage: TokenUsage;
  note: string | null;
}

/**
 * One agent turn's conversation. It lives outside workflow history: the workflow
 * only holds its reference, so history grows by a small constant per step.
 */
export interface Conversation {
  ref: string;
  role: AgentRole;
  model: string;
  language: Language;
  workspace: string;
  protectedPaths: string[];
  entries: ConversationEntry[];
  toolResults: Record<string, ToolResult>;
  /**
   * With a git store: the commit each call that changed files made, kept apart from the answer
   * the model sees, so a retried call reports the same commit without running again.
   */
  toolCommits?: Record<string, string>;
  steps: StepDecision[];
  /** Absent: the role's fixed tools without `run_command`. */
  offered?: OfferedTools;
  /**
   * The context window a server's context-length error taught this turn, when smaller than the
   * model's configured one; later steps trim to it at once instead of being refused again.
   */
  contextTokens?: number;
}

/**
 * Where conversations are kept: files under the worker's ACA_HOME (FileConversationStore), or
 * Postgres when DATABASE_URL is set, so that workers on other hosts see them too
 * (PgConversationStore in src/store/run-store-repository.ts).
 */
export interface ConversationStore {
  exists(ref: string): Promise<boolean>;
  /** Throws an error whose `code` is 'ENOENT' when nothing is stored under `ref`. */
  load(ref: string): Promise<Conversation>;
  /** Creates or replaces the conversation under `conversation.ref` (a retried step saves again). */
  save(conversation: Conversation): Promise<void>;
}

/** What `load` throws for a reference with nothing stored under it, whatever the store. */
export class ConversationNotFoundError extends AcaError {
  readonly code = 'ENOENT';
  constructor(readonly ref: string) {
    super(`no conversation is stored under "${ref}"`);
  }
}

/** Keeps each conversation as one JSON file, replaced atomically on every save. */
export class FileConversationStore implements ConversationStore {
  private readonly files: JsonFiles;

  constructor(rootDir: string) {
    this.files = new JsonFiles(rootDir, 'conversation');
  }

  exists(ref: string): Promise<boolean> {
    return this.files.has(ref);
  }

  async load(ref: string): Promise<Conversation> {
    const body = await this.files.get(ref);
    if (body === null) throw new ConversationNotFoundError(ref);
    return JSON.parse(body) as Conversation;
  }

  save(conversation: Conversation): Promise<void> {
    return this.files.put(conversation.ref, JSON.stringify(conversation));
  }
}
