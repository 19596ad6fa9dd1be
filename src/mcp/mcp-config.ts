import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { UserInputError } from '../shared/errors';
import type { AgentRole } from '../shared/types';

/**
 * The MCP servers a worker starts, read from the JSON file ACA_MCP_CONFIG names, in the common
 * `{"mcpServers": {"<name>": {...}}}` shape. The file is the operator's, on the worker: nothing a
 * repository holds or a run asks for adds a server.
 */

export const AGENT_ROLES = [
  'planner',
  'coder',
  'tester',
  'reflector',
] as const satisfies readonly AgentRole[];

/** Who is offered a server's tools when its entry names no `roles`. */
export const DEFAULT_MCP_ROLES: readonly AgentRole[] = ['coder', 'reflector'];

/**
 * Single underscores only, none at either end, and short: the server's name is kept whole inside
 * `mcp__<server>__<tool>`, and the first `__` after the prefix ends it (mcpServerOfFunction).
 */
const SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
export const MAX_SERVER_NAME_CHARS = 32;

const roles = z
  .array(z.enum(AGENT_ROLES))
  .min(1, 'names no role; leave the key out for the default (coder and reflector)')
  .optional();
const tools = z.array(z.string().min(1)).min(1, 'allows no tool; leave the key out to allow every tool');

const stdioServerSchema = z.strictObject({
  command: z.string().min(1, 'is empty'),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string({ error: 'must be a string' })).optional(),
  roles,
  tools: tools.optional(),
});

const httpServerSchema = z.strictObject({
  url: z
    .string()
    .refine(
      (text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol),
      'is not an http(s) URL',
    ),
  headers: z.record(z.string(), z.string({ error: 'must be a string' })).optional(),
  roles,
  tools: tools.optional(),
});

const serverSchema = z.unknown().superRefine((value, ctx) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', message: 'must be an object' });
    return;
  }
  const stdio = 'command' in value;
  const http = 'url' in value;
  if (stdio === http) {
    ctx.addIssue({
      code: 'custom',
      message: stdio
        ? 'has both `command` (a stdio server) and `url` (an HTTP server); give one'
        : 'needs `command` (a stdio server) or `url` (a streamable HTTP server)',
    });
    return;
  }
  const parsed = (stdio ? stdioServerSchema : httpServerSchema).safeParse(value);
  if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue } as never);
});

function serverNameProblem(name: string): string | null {
  if (name.length > MAX_SERVER_NAME_CHARS)
    return `a server name has at most ${MAX_SERVER_NAME_CHARS} characters`;
  if (!SERVER_NAME.test(name)) {
    return 'a server name is letters, digits, `-` and single `_` between them (no `__`, no `_` at either end)';
  }
  return null;
}

const fileSchema = z.strictObject({
  mcpServers: z
    .record(z.string(), serverSchema, { error: 'must be an object of servers by name' })
    .superRefine((servers, ctx) => {
      for (const name of Object.keys(servers)) {
        const problem = serverNameProblem(name);
        if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
      }
    }),
});

interface ServerCommon {
  name: string;
  roles: readonly AgentRole[];
  /** The tools offered; null for every tool the server lists. */
  tools: readonly string[] | null;
}

export interface StdioServerConfig extends ServerCommon {
  transport: 'stdio';
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /**
   * The folder the server's process starts in: the configuration file's, the operator's own. Never
   * the worker's, which for `aca run` in a repository is that (hostile) repository, whose files a
   * server would find first: `python -m` a module of its own, npx its `.npmrc`, a relative path.
   */
  cwd: string;
}

export interface HttpServerConfig extends ServerCommon {
  transport: 'http';
  url: string;
  headers: Readonly<Record<string, string>>;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export interface McpConfig {
  /** The file it was read from, for messages. */
  file: string;
  servers: readonly McpServerConfig[];
}

/** ACA_MCP_CONFIG names a file that cannot be read or does not describe MCP servers. */
export class McpConfigFileError extends UserInputError {
  constructor(
    readonly file: string,
    /** The key path of the first problem, e.g. `mcpServers.search.command`; empty for the file. */
    readonly key: string,
    readonly problem: string,
  ) {
    super(`ACA_MCP_CONFIG file ${file}${key ? `, key "${key}"` : ''}: ${problem}`);
  }
}

export function readMcpConfigFile(file: string): McpConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new McpConfigFileError(file, '', `cannot be read (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new McpConfigFileError(file, '', `is not JSON (${(err as Error).message})`);
  }
  return parseMcpConfig(file, value);
}

/** The file's parsed JSON as a configuration, or the first problem, naming its key. */
export function parseMcpConfig(file: string, value: unknown): McpConfig {
  const parsed = fileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const key = [...issue.path, ...unknownKeys.slice(0, 1)].map(String).join('.');
    const problem = issue.code === 'unrecognized_keys' ? 'is not a key aca knows' : issue.message;
    throw new McpConfigFileError(file, key, problem);
  }
  const servers = Object.entries(parsed.data.mcpServers).map(([name, raw]): McpServerConfig => {
    const entry = raw as z.infer<typeof stdioServerSchema> | z.infer<typeof httpServerSchema>;
    const common = {
      name,
      roles: entry.roles ? [...new Set(entry.roles)] : DEFAULT_MCP_ROLES,
      tools: entry.tools ?? null,
    };
    if ('command' in entry) {
      return {
        ...common,
        transport: 'stdio',
        command: entry.command,
        args: entry.args ?? [],
        env: entry.env ?? {},
        cwd: path.dirname(path.resolve(file)),
      };
    }
    return { ...common, transport: 'http', url: entry.url, headers: entry.headers ?? {} };
  });
  return { file, servers };
}

/**
 * What a stdio server's process may inherit from the worker: where programs and home are, the
 * locale, the time zone and the temporary folder. The worker's secrets (OPENAI_API_KEY,
 * DATABASE_URL, Temporal's TLS settings, ...) are never among them; a server that needs a key is
 * given it by the file's `env`.
 */
const INHERITED_VARIABLES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];

/** The whole environment of a stdio server's process: the basics above, then the file's `env`. */
export function stdioEnvironment(
  server: StdioServerConfig,
  workerEnv: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = workerEnv[name];
    // A value starting "()" is an exported shell function, which a shell server would run.
    if (value !== undefined && !value.startsWith('()')) env[name] = value;
  }
  return { ...env, ...server.env };
}
