import { clipMiddle } from '../shared/clip-text';
import { printable } from '../shared/terminal-text';
import type { ToolResult } from '../tools/tool';

/**
 * An MCP tool's answer as the model is told it. The server is not trusted: what it returns is
 * text to read, never anything aca runs or follows. It is clipped (a server can answer megabytes),
 * stripped of terminal escape sequences (the answer ends up in logs and `aca` output), and every
 * other hidden character is shown as a visible escape. Content that is not text is described, not
 * passed on.
 */

/** The most characters of one answer the model is given. */
export const MAX_MCP_ANSWER_CHARS = 20_000;

/** ESC-introduced sequences: CSI (`ESC [ ... final`), OSC/DCS/APC/PM/SOS strings, two-byte escapes. */
const TERMINAL_SEQUENCES = new RegExp(
  [
    '\\u001b\\[[0-?]*[ -/]*[@-~]',
    '\\u009b[0-?]*[ -/]*[@-~]',
    '(?:\\u001b[\\]PX^_]|[\\u0090\\u009d\\u009e\\u009f\\u0098])[^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)?',
    '\\u001b[ -/]*[0-~]',
  ].join('|'),
  'g',
);

/** Text with terminal sequences removed, line ends made `\n`, and other hidden characters escaped. */
export function untrustedText(text: string): string {
  return printable(text.replace(TERMINAL_SEQUENCES, '').replace(/\r\n?/g, '\n'));
}

/** Bytes of base64 data, without decoding it. */
function base64Bytes(data: string): number {
  const body = data.replace(/\s/g, '');
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((body.length * 3) / 4) - padding);
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

function describeItem(item: unknown): string {
  if (typeof item !== 'object' || item === null) return '[content that is not an object]';
  const entry = item as Record<string, unknown>;
  const type = str(entry.type);
  const mime = str(entry.mimeType);
  const withMime = (what: string, bytes: number) => `[${what}${mime ? `, ${mime}` : ''}, ${bytes} bytes]`;
  switch (type) {
    case 'text':
      return str(entry.text);
    case 'image':
    case 'audio':
      return withMime(type, base64Bytes(str(entry.data)));
    case 'resource_link':
      return `[resource link: ${str(entry.name)} ${str(entry.uri)}]`;
    case 'resource': {
      const resource = (entry.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === 'string') return `[resource ${str(resource.uri)}]\n${resource.text}`;
      return `[resource ${str(resource.uri)}, ${base64Bytes(str(resource.blob))} bytes]`;
    }
    default:
      return `[content of type "${type.slice(0, 40)}"]`;
  }
}

/** Structured content as JSON; a description for a value JSON cannot write (nested too deep to recurse). */
function structuredText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '[structured content that cannot be written out as JSON]';
  }
}

/** The answer's content as one text: text items joined, the others described. */
export function mcpContentText(result: unknown, max = MAX_MCP_ANSWER_CHARS): string {
  const body = (typeof result === 'object' && result !== null ? result : {}) as Record<string, unknown>;
  const content = Array.isArray(body.content) ? body.content : [];
  let text = content.map(describeItem).join('\n');
  if (text === '' && body.structuredContent !== undefined) text = structuredText(body.structuredContent);
  // Clipped before escaping too, so a huge answer costs no more than its kept part.
  return clipMiddle(untrustedText(clipMiddle(text, max * 2)), max);
}

/** An MCP call's result as the tool answer stored for the model. */
export function mcpToolAnswer(result: unknown, max = MAX_MCP_ANSWER_CHARS): ToolResult {
  const text = mcpContentText(result, max);
  const isError = typeof result === 'object' && result !== null && (result as { isError?: unknown }).isError;
  if (isError === true) return { ok: false, error: `the tool reported an error: ${text || '(no message)'}` };
  return { ok: true, content: text };
}
