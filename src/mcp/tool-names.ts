import { createHash } from 'node:crypto';

/**
 * The function names MCP tools are offered under: `mcp__<server>__<tool>`, within the chat API's
 * rule for function names (`^[a-zA-Z0-9_-]{1,64}$`). A tool's name is the server's to choose and
 * may break the rule, so the tool part is fitted: characters outside the rule become `_`, and a
 * name that had to change, or is too long, ends in a short hash of the name as the server wrote it.
 * Two tools of a server never share a function name; the server part is never changed (its
 * name was checked when the configuration was read).
 */

export const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Every MCP tool's function name starts so; the name of a built-in tool never does. */
export const MCP_FUNCTION_PREFIX = 'mcp__';
const MAX_FUNCTION_NAME_CHARS = 64;
const HASH_CHARS = 8;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_CHARS);
}

function fitted(prefix: string, tool: string, salt: number): string {
  const room = MAX_FUNCTION_NAME_CHARS - prefix.length;
  const cleaned = tool.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (salt === 0 && cleaned === tool && tool.length > 0 && tool.length <= room) return prefix + tool;
  const hash = shortHash(salt === 0 ? tool : `${salt}\u0000${tool}`);
  const head = cleaned.slice(0, Math.max(0, room - HASH_CHARS - 1));
  return `${prefix}${head}_${hash}`;
}

/** One server's tools by function name, and the reverse. */
export interface ToolNameMap {
  /** Function name to the tool's own name. */
  toolOf: ReadonlyMap<string, string>;
  /** The tool's own name to its function name. */
  functionOf: ReadonlyMap<string, string>;
}

/**
 * The function names of a server's tools. Names are given in the server's order, so the same
 * listing always yields the same names (a worker that restarts a server, or another worker with
 * the same server, offers the same ones).
 */
export function toolFunctionNames(server: string, tools: readonly string[]): ToolNameMap {
  const prefix = `${MCP_FUNCTION_PREFIX}${server}__`;
  if (prefix.length + 1 + HASH_CHARS > MAX_FUNCTION_NAME_CHARS) {
    throw new Error(`MCP server name "${server}" leaves no room for its tools' names`);
  }
  const toolOf = new Map<string, string>();
  const functionOf = new Map<string, string>();
  for (const tool of tools) {
    if (functionOf.has(tool)) continue;
    let salt = 0;
    let name = fitted(prefix, tool, salt);
    while (toolOf.has(name)) name = fitted(prefix, tool, ++salt);
    toolOf.set(name, tool);
    functionOf.set(tool, name);
  }
  return { toolOf, functionOf };
}

/**
 * The server an MCP tool's function name belongs to, or null for a name that is not an MCP
 * tool's. Server names hold no `__` and are never clipped, so the server is the text up to the
 * next `__`.
 */
export function mcpServerOfFunction(functionName: string): string | null {
  if (!functionName.startsWith(MCP_FUNCTION_PREFIX)) return null;
  const rest = functionName.slice(MCP_FUNCTION_PREFIX.length);
  const end = rest.indexOf('__');
  if (end <= 0) return null;
  return rest.slice(0, end);
}
