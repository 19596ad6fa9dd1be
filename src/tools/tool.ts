import { z } from 'zod';
import { parseModelJson, type ModelJsonOptions } from '../shared/model-json';
import type { TurnFinish } from '../shared/types';

export interface ToolContext {
  workspace: string;
  /** Workspace-relative paths no agent may write or delete (the user's acceptance tests). */
  protectedPaths: readonly string[];
  /** Files this turn read only in part: create_file may not overwrite them whole. */
  partlyRead?: ReadonlySet<string>;
}

export type ToolResult = ({ ok: true } & Record<string, unknown>) | { ok: false; error: string };

type Parameters = z.ZodObject;

interface ToolBase<N extends string, P extends Parameters> {
  name: N;
  description: string;
  /** Strict zod object: the model's JSON schema and the parser of its arguments both come from it. */
  parameters: P;
}

/** A tool that acts on the workspace; each call runs as an activity of its own. */
export interface WorkspaceTool<N extends string = string, P extends Parameters = Parameters> extends ToolBase<
  N,
  P
> {
  kind: 'workspace';
  execute(ctx: ToolContext, args: z.infer<P>): Promise<ToolResult>;
  /** What the Web UI shows after the tool's name for one call, e.g. the path it touches. */
  target(args: z.infer<P>): string;
  /** Parses raw model arguments with `parameters`, then executes; bad arguments are answered, not thrown. */
  invoke(ctx: ToolContext, rawArguments: string): Promise<ToolResult>;
}

/** A tool that ends an agent's turn; what it yields travels to the workflow. */
export interface FinishingTool<N extends string = string, P extends Parameters = Parameters> extends ToolBase<
  N,
  P
> {
  kind: 'finishing';
  finish(args: z.infer<P>): TurnFinish;
}

/**
 * A tool that runs a command line in the run's sandbox: its call is an activity on the host's
 * test queue, not a file tool's.
 */
export interface CommandTool<N extends string = string, P extends Parameters = Parameters> extends ToolBase<
  N,
  P
> {
  kind: 'command';
  target(args: z.infer<P>): string;
}

export type Tool = WorkspaceTool | FinishingTool | CommandTool;

export function defineWorkspaceTool<N extends string, P extends Parameters>(
  tool: Omit<WorkspaceTool<N, P>, 'kind' | 'invoke'>,
): WorkspaceTool<N, P> {
  return {
    kind: 'workspace',
    ...tool,
    async invoke(ctx, rawArguments) {
      const parsed = parseArguments(tool, rawArguments);
      return parsed.ok ? tool.execute(ctx, parsed.args) : { ok: false, error: parsed.error };
    },
  };
}

export function defineFinishingTool<N extends string, P extends Parameters>(
  tool: Omit<FinishingTool<N, P>, 'kind'>,
): FinishingTool<N, P> {
  return { kind: 'finishing', ...tool };
}

export interface FunctionToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** A tool's definition is made once: every model step sends it, and the schema never changes. */
const definitions = new WeakMap<Tool, FunctionToolDefinition>();

/** The definition the model is given; shared by every caller, so read-only. */
export function functionDefinition(tool: Tool): FunctionToolDefinition {
  const made = definitions.get(tool);
  if (made) return made;
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.parameters) as Record<string, unknown>;
  const definition: FunctionToolDefinition = {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters },
  };
  definitions.set(tool, definition);
  return definition;
}

/**
 * Parses a call's raw JSON arguments with the tool's schema; the error text goes back to the model.
 * With `repair`, syntax a model commonly gets wrong is fixed when the text was written whole (see
 * parseModelJson); `repaired` then holds the JSON that was accepted, to store in place of the original.
 */
export function parseArguments<P extends Parameters>(
  tool: { name: string; parameters: P },
  rawArguments: string,
  options: ModelJsonOptions = { repair: false },
): { ok: true; args: z.infer<P>; repaired?: string } | { ok: false; error: string; kind: 'json' | 'schema' } {
  const json =
    rawArguments.trim() === '' ? { ok: true as const, value: {} } : parseModelJson(rawArguments, options);
  if (!json.ok) return { ok: false, error: `arguments are ${json.error}`, kind: 'json' };
  const parsed = tool.parameters.safeParse(json.value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
      .join('; ');
    return {
      ok: false,
      error: `arguments do not match the schema of ${tool.name}: ${issues}`,
      kind: 'schema',
    };
  }
  return {
    ok: true,
    args: parsed.data,
    ...('repaired' in json && json.repaired ? { repaired: json.repaired } : {}),
  };
}
