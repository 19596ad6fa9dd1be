import type { Conversation, ConversationStore } from '../store/conversation-store';
import { executeFileTool, isFileToolName, type FileToolName, type ToolResult } from '../tools/file-tools';

/** What a tool call came to: its outcome, and with a git store the commit of what it changed. */
export interface ToolCallOutcome {
  ok: boolean;
  error?: string;
  commit?: string;
  /** The conversation the call wrote, when it took it over (see AgentStepOutcome.ref). */
  ref?: string;
}

/** Where a tool call runs: the run's work tree on its host, at the recorded commit. */
export interface ToolCallSite {
  workspace: string;
  /** After a call that changed `path`: commits it (and pushes it); the commit, or null for none. */
  commitChange?(path: string, toolName: FileToolName): Promise<string | null>;
}

/** The tools that write to the work tree. */
const CHANGING_TOOLS: ReadonlySet<FileToolName> = new Set(['create_file', 'edit_file', 'delete_file']);

/**
 * Executes one validated file-tool call of a turn and stores its answer for the model. `site`
 * is asked for only when the call has not run yet (a retry of a call that ran answers as before).
 */
export async function executeTurnToolCall(
  store: ConversationStore,
  ref: string,
  toolCallId: string,
  site?: (conversation: Conversation) => Promise<ToolCallSite>,
): Promise<ToolCallOutcome> {
  const conversation = await store.load(ref);
  const done = conversation.toolResults[toolCallId];
  if (done) return outcomeOf(done, conversation.toolCommits?.[toolCallId]);
  const call = conversation.entries
    .flatMap((entry) => (entry.kind === 'assistant' ? entry.toolCalls : []))
    .find((c) => c.id === toolCallId);
  if (!call) throw new Error(`tool call ${toolCallId} is not part of ${ref}`);
  if (!isFileToolName(call.name)) {
    throw new Error(`tool call ${toolCallId} is ${call.name}, not a file tool`);
  }
  const where = site ? await site(conversation) : { workspace: conversation.workspace };
  const changing = CHANGING_TOOLS.has(call.name);
  const result = await executeFileTool(
    {
      workspace: where.workspace,
      protectedPaths: conversation.protectedPaths,
      partlyRead: partlyReadFiles(conversation),
    },
    call.name,
    call.arguments,
  );
  let commit: string | null = null;
  if (changing && result.ok && typeof result.path === 'string' && where.commitChange) {
    commit = await where.commitChange(result.path, call.name);
  }
  conversation.toolResults[toolCallId] = result;
  if (commit) conversation.toolCommits = { ...conversation.toolCommits, [toolCallId]: commit };
  await store.save(conversation);
  return outcomeOf(result, commit ?? undefined);
}

function outcomeOf(result: ToolResult, commit: string | undefined): ToolCallOutcome {
  const outcome: ToolCallOutcome = result.ok ? { ok: true } : { ok: false, error: result.error };
  if (commit) outcome.commit = commit;
  return outcome;
}

/**
 * The files of this turn that were read only in part (a window, or too large for one answer) and
 * not written since: rewriting one whole from what was seen would lose the rest. Windows that
 * together hold every line of the file count as a whole read, since a file larger than one answer
 * can be seen whole no other way.
 */
export function partlyReadFiles(conversation: Conversation): Set<string> {
  const partly = new Set<string>();
  // Windows seen of each file since it was last written, for its line count at the time.
  const seen = new Map<string, { total: number; windows: Array<[number, number]> }>();
  for (const entry of conversation.entries) {
    if (entry.kind !== 'assistant') continue;
    for (const call of entry.toolCalls) {
      const result = conversation.toolResults[call.id];
      if (!result?.ok || typeof result.path !== 'string') continue;
      if (call.name === 'read_file') {
        const total = Number(result.total_lines);
        const before = seen.get(result.path);
        const windows = before && before.total === total ? before.windows : [];
        // A window with lines shown only in part does not count towards a whole read.
        const clipped = Array.isArray(result.clipped_lines) && result.clipped_lines.length > 0;
        if (!clipped) windows.push([Number(result.start_line), Number(result.end_line)]);
        seen.set(result.path, { total, windows });
        if (coversAllLines(windows, total)) partly.delete(result.path);
        else partly.add(result.path);
      } else if (call.name === 'edit_file' || call.name === 'create_file' || call.name === 'delete_file') {
        partly.delete(result.path);
        seen.delete(result.path);
      }
    }
  }
  return partly;
}

/** Whether the windows (inclusive line ranges) hold every line from 1 to `total`. */
function coversAllLines(windows: Array<[number, number]>, total: number): boolean {
  let next = 1;
  for (const [start, end] of [...windows].sort((a, b) => a[0] - b[0])) {
    if (start > next) break;
    next = Math.max(next, end + 1);
  }
  return next > total;
}
