import { parseModelJson, type ModelJsonOptions } from '../shared/model-json';

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

const TAG_OPEN = '<tool_call>';
const TAG_CLOSE = '</tool_call>';
/** A fence line that may open a block of calls: bare or `json`. */
const CALL_FENCE_OPEN = /^```[ \t]*(?:json)?[ \t]*$/i;
const FENCE_LINE = /^[ \t]*```/;

/**
 * Tool calls a model wrote into `content` instead of `tool_calls`, as models served by Ollama,
 * vLLM or llama.cpp without a matching tool parser do. Only the answer's final block counts, and
 * only when it stands outside any code fence of the prose: a run of `<tool_call>{…}</tool_call>`
 * tags, a run of ```json fences holding nothing but calls, or the whole content as one JSON
 * object (or an array of them), each `{"name": …, "arguments": {…}}` (or `"parameters"`). A call
 * quoted earlier in the answer (echoed file content, an example) is never taken, and only names
 * in `toolNames` count: a tag naming anything else stays content.
 */
export function parseTextToolCalls(
  content: string,
  toolNames: readonly string[],
  options: ModelJsonOptions,
): TextToolCalls {
  const text = content.trimEnd();
  const tagged = trailingTags(text, toolNames, options);
  if (tagged) return tagged;
  const fenced = trailingFences(text, toolNames, options);
  if (fenced) return fenced;
  const whole = callsIn(text, toolNames, options);
  return whole.length ? { calls: whole, rest: null } : { calls: [], rest: content };
}

/** The run of `<tool_call>` tags that ends the content, when it stands outside any fence. */
function trailingTags(
  text: string,
  toolNames: readonly string[],
  options: ModelJsonOptions,
): TextToolCalls | null {
  const blocks: string[] = [];
  const kept: string[] = [];
  let before = text;
  // A run cut at the output limit ends in an open tag: no call, but the run before it still ends the answer.
  const open = before.lastIndexOf(TAG_OPEN);
  if (open !== -1 && before.indexOf(TAG_CLOSE, open) === -1) {
    kept.push(before.slice(open));
    before = before.slice(0, open).trimEnd();
  }
  while (before.endsWith(TAG_CLOSE)) {
    const start = before.lastIndexOf(TAG_OPEN);
    if (start === -1) break;
    const inner = before.slice(start + TAG_OPEN.length, before.length - TAG_CLOSE.length);
    if (inner.includes(TAG_CLOSE)) break;
    blocks.unshift(inner);
    before = before.slice(0, start).trimEnd();
  }
  if (blocks.length === 0 || insideFence(before)) return null;
  const calls: TextToolCall[] = [];
  const left: string[] = [];
  for (const inner of blocks) {
    const found = callsIn(inner, toolNames, options);
    if (found.length) calls.push(...found);
    else left.push(`${TAG_OPEN}${inner}${TAG_CLOSE}`);
  }
  if (calls.length === 0) return null;
  const rest = [before, ...left, ...kept].filter((part) => part.trim() !== '').join('\n');
  return { calls, rest: rest || null };
}

/** The run of fences, each holding nothing but calls, that ends the content. */
function trailingFences(
  text: string,
  toolNames: readonly string[],
  options: ModelJsonOptions,
): TextToolCalls | null {
  const lines = text.split('\n');
  const calls: TextToolCall[] = [];
  let end = lines.length;
  for (;;) {
    while (end > 0 && lines[end - 1].trim() === '') end--;
    if (end === 0 || lines[end - 1].trim() !== '```') break;
    let open = end - 2;
    while (open >= 0 && !FENCE_LINE.test(lines[open])) open--;
    if (open < 0 || !CALL_FENCE_OPEN.test(lines[open].trim())) break;
    // An odd count of fence lines above means this "opening" line closes an earlier fence.
    if (insideFence(lines.slice(0, open).join('\n'))) break;
    const found = callsIn(lines.slice(open + 1, end - 1).join('\n'), toolNames, options);
    if (found.length === 0) break;
    calls.unshift(...found);
    end = open;
  }
  if (calls.length === 0) return null;
  return { calls, rest: lines.slice(0, end).join('\n').trim() || null };
}

/** Whether text that precedes a block leaves a code fence open, so the block is quoted in it. */
function insideFence(before: string): boolean {
  return before.split('\n').filter((line) => FENCE_LINE.test(line)).length % 2 === 1;
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
