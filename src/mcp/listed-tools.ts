import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpServerConfig } from './mcp-config';
import { clipMiddle } from '../shared/clip-text';
import { untrustedText } from './mcp-result';
import { toolFunctionNames } from './tool-names';

/**
 * A server's tools as its listing gave them, made fit to offer a model. The listing is the
 * server's word and is not trusted: descriptions are clipped and made printable, a schema that is
 * not an object schema, or is too large, is replaced by a plain object schema, and only so many
 * tools and pages are read.
 */

export interface ListedTool {
  /** The name the model calls it by: `mcp__<server>__<tool>`, fitted (see tool-names.ts). */
  functionName: string;
  /** The tool's own name, as the server is called with it. */
  tool: string;
  description: string;
  /** A JSON schema of an object: the tool's arguments. */
  inputSchema: Record<string, unknown>;
}

const MAX_TOOLS = 128;
const MAX_PAGES = 16;
const MAX_DESCRIPTION_CHARS = 2_000;
const MAX_SCHEMA_CHARS = 32_000;
const MAX_TOOL_NAME_CHARS = 256;
/** Descriptions and schemas of one server together: what it may add to every prompt it is offered in. */
const MAX_LISTING_CHARS = 200_000;

const OPEN_OBJECT: Record<string, unknown> = { type: 'object' };

/** The tool's schema when it is a JSON object schema of a sensible size, else a plain object schema. */
function argumentSchema(schema: unknown): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return OPEN_OBJECT;
  const object = schema as Record<string, unknown>;
  if (object.type !== 'object') return OPEN_OBJECT;
  let text: string | undefined;
  try {
    text = JSON.stringify(object);
  } catch {
    return OPEN_OBJECT;
  }
  if (text === undefined || text.length > MAX_SCHEMA_CHARS) return OPEN_OBJECT;
  // A copy through JSON: nothing of the listing's objects is kept by reference.
  return JSON.parse(text) as Record<string, unknown>;
}

/** Every page of the server's tools, the allowed ones of them fitted to be offered. */
export async function listedTools(
  client: Pick<Client, 'listTools'>,
  config: Pick<McpServerConfig, 'name' | 'tools'>,
  timeoutMs: number,
): Promise<ListedTool[]> {
  const raw: Array<{ name: string; description?: unknown; inputSchema?: unknown }> = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES && raw.length < MAX_TOOLS; page++) {
    const listing = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
    raw.push(...listing.tools);
    cursor = listing.nextCursor;
    if (cursor === undefined) break;
  }
  const allowed = config.tools ? new Set(config.tools) : null;
  const kept = raw
    .filter((tool) => typeof tool.name === 'string' && tool.name.length > 0)
    .filter((tool) => tool.name.length <= MAX_TOOL_NAME_CHARS)
    .filter((tool) => allowed === null || allowed.has(tool.name))
    .slice(0, MAX_TOOLS);
  const names = toolFunctionNames(
    config.name,
    kept.map((tool) => tool.name),
  );
  const seen = new Set<string>();
  const listed: ListedTool[] = [];
  let chars = 0;
  for (const tool of kept) {
    // A listing that names a tool twice offers it once, as first described.
    if (seen.has(tool.name)) continue;
    seen.add(tool.name);
    const offered: ListedTool = {
      functionName: names.functionOf.get(tool.name)!,
      tool: tool.name,
      description: clipMiddle(
        untrustedText(typeof tool.description === 'string' ? tool.description : ''),
        MAX_DESCRIPTION_CHARS,
      ),
      inputSchema: argumentSchema(tool.inputSchema),
    };
    chars += offered.description.length + JSON.stringify(offered.inputSchema).length;
    // The tools past the budget are left out, in the listing's order, rather than all clipped.
    if (chars > MAX_LISTING_CHARS) break;
    listed.push(offered);
  }
  return listed;
}
