import { parseModelJson } from '../shared/model-json';
import type { ToolResult } from '../tools/tool';
import type { Conversation, ToolCallRecord } from '../store/conversation-store';

/**
 * Characters per token for the estimate. English prose runs near 4, but code and the JSON escaping
 * of tool answers run nearer 3: the lower figure trims a little early rather than overflowing.
 */
export const CHARS_PER_TOKEN = 3;

/** The tokens a request's messages and tools take, estimated from their JSON. */
export function estimateTokens(...parts: unknown[]): number {
  return Math.ceil(
    parts.reduce<number>((sum, part) => sum + JSON.stringify(part).length, 0) / CHARS_PER_TOKEN,
  );
}

/**
 * The tool answers to send as one-line stubs so that a request of `estimatedTokens` fits in
 * `promptTokens`: the oldest first, never those of the latest step (the model is acting on them).
 * The system and user messages are never touched. A pure function of the conversation, so a retried
 * activity sends exactly what the first attempt sent, and the stored conversation stays whole.
 */
export function chooseTrimmed(
  conversation: Conversation,
  estimatedTokens: number,
  promptTokens: number,
): Set<string> {
  const trimmed = new Set<string>();
  let excessChars = (estimatedTokens - promptTokens) * CHARS_PER_TOKEN;
  if (excessChars <= 0) return trimmed;
  const steps = conversation.entries.flatMap((entry) => (entry.kind === 'assistant' ? [entry] : []));
  for (const step of steps.slice(0, -1)) {
    for (const call of step.toolCalls) {
      const result = conversation.toolResults[call.id];
      if (!result) continue;
      const saved = JSON.stringify(result).length - JSON.stringify(trimmedResult(call, result)).length;
      if (saved <= 0) continue;
      trimmed.add(call.id);
      excessChars -= saved;
      if (excessChars <= 0) return trimmed;
    }
  }
  return trimmed;
}

/** What the model is sent instead of a trimmed answer: what it was and how to get it back. */
export function trimmedResult(call: ToolCallRecord, result: ToolResult): ToolResult {
  const size = `${JSON.stringify(result).length} chars`;
  const what = describeCall(call, result);
  if (!result.ok) return { ok: false, error: `trimmed to save context: ${what}, ${size}` };
  const again =
    call.name === 'read_file'
      ? 'read it again if needed'
      : call.name === 'search_files'
        ? 'search again if needed'
        : call.name === 'list_files'
          ? 'list again if needed'
          : 'its answer was shortened to save context';
  return { ok: true, trimmed: `${what}, ${size}; ${again}` };
}

function describeCall(call: ToolCallRecord, result: ToolResult): string {
  const parsed = parseModelJson(call.arguments, { repair: false });
  const args = (
    parsed.ok && typeof parsed.value === 'object' && parsed.value !== null ? parsed.value : {}
  ) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, 120) : '');
  const out = result.ok ? (result as Record<string, unknown>) : {};
  const path = text(out.path) || text(args.path);
  switch (call.name) {
    case 'read_file': {
      const lines =
        typeof out.start_line === 'number' && typeof out.end_line === 'number'
          ? ` lines ${out.start_line}-${out.end_line}${typeof out.total_lines === 'number' ? ` of ${out.total_lines}` : ''}`
          : '';
      return `read_file ${path}${lines}`;
    }
    case 'search_files': {
      const where = path ? ` in ${path}` : '';
      const found = Array.isArray(out.matches) ? `, ${out.matches.length} matches` : '';
      return `search_files ${JSON.stringify(text(args.pattern))}${where}${found}`;
    }
    case 'list_files': {
      const found = Array.isArray(out.files) ? `, ${out.files.length} files` : '';
      return `list_files ${path || '.'}${found}`;
    }
    default:
      return `${call.name}${path ? ` ${path}` : ''}`;
  }
}
