import { parseModelJson, type ModelJsonOptions } from './model-json';

export interface TextToolCall {
  name: string;
  /** Raw JSON arguments, parsed later by the tool's schema like structured calls' arguments. */
  arguments: string;
}

export interface TextToolCalls {
  calls: TextToolCall[];
  /** The content left once the calls are taken out; null when nothing else was said. */
  rest: string | null;
}

const TAG = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const FENCE = /```[ \t]*(?:json)?[ \t]*\r?\n([\s\S]*?)```/gi;

/**
 * Tool calls a model wrote into `content` instead of `tool_calls`, as models served by Ollama,
 * vLLM or llama.cpp without a matching tool parser do: `<tool_call>{…}</tool_call>` blocks, a
 * ```json fence, or the whole content as one JSON object (or an array of them), each
 * `{"name": …, "arguments": {…}}` (or `"parameters"`). Only names in `toolNames` count: anything
 * else stays content, so prose that merely shows JSON is never executed.
 */
export function parseTextToolCalls(
  content: string,
  toolNames: readonly string[],
  options: ModelJsonOptions,
): TextToolCalls {
  for (const pattern of [TAG, FENCE]) {
    const blocks = [...content.matchAll(pattern)];
    const calls: TextToolCall[] = [];
    let rest = content;
    for (const block of blocks) {
      const found = callsIn(block[1], toolNames, options);
      if (found.length === 0) continue;
      calls.push(...found);
      rest = rest.replace(block[0], '');
    }
    if (calls.length) return { calls, rest: rest.trim() || null };
  }
  const whole = callsIn(content, toolNames, options);
  return whole.length ? { calls: whole, rest: null } : { calls: [], rest: content };
}

/** The calls one block holds: a call object, or an array of call objects all naming known tools. */
function callsIn(text: string, toolNames: readonly string[], options: ModelJsonOptions): TextToolCall[] {
  const trimmed = unfence(text.trim());
  if (!/^[[{]/.test(trimmed)) return [];
  const json = parseModelJson(trimmed, options);
  if (!json.ok) return [];
  const items = Array.isArray(json.value) ? json.value : [json.value];
  const calls = items.map((item) => asCall(item, toolNames));
  return calls.length && calls.every((c) => c !== null) ? (calls as TextToolCall[]) : [];
}

/** A fence inside a tag, as some chat templates produce. */
function unfence(text: string): string {
  const match = /^```[ \t]*(?:json)?[ \t]*\r?\n([\s\S]*?)```$/i.exec(text);
  return match ? match[1].trim() : text;
}

function asCall(item: unknown, toolNames: readonly string[]): TextToolCall | null {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
  const record = item as Record<string, unknown>;
  // Some templates nest the call as {"function": {"name", "arguments"}}.
  const call =
    typeof record.function === 'object' && record.function !== null
      ? (record.function as Record<string, unknown>)
      : record;
  const keys = Object.keys(call);
  if (typeof call.name !== 'string' || !toolNames.includes(call.name)) return null;
  if (keys.some((k) => k !== 'name' && k !== 'arguments' && k !== 'parameters' && k !== 'id' && k !== 'type'))
    return null;
  const args = call.arguments ?? call.parameters ?? {};
  // A string is the arguments' JSON text as written; the tool's schema parses it like any call's.
  if (typeof args === 'string') return { name: call.name, arguments: args };
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return null;
  return { name: call.name, arguments: JSON.stringify(args) };
}
