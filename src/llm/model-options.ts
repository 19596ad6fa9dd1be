import * as fs from 'node:fs';
import { z } from 'zod';
import { UserInputError } from '../shared/errors';

/**
 * What a model is asked with besides the conversation, and how much of it fits. Read from the JSON
 * file ACA_MODEL_OPTIONS names: `{"<model>": {...}, "*": {...}}`, the exact name winning key by key
 * over `*`.
 */
export const modelOptionsSchema = z.strictObject({
  max_completion_tokens: z.number().int().positive().optional(),
  reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high']).optional(),
  temperature: z.number().min(0).max(2).optional(),
  /** The model's context window in tokens; replaces the built-in table's figure. */
  context_tokens: z.number().int().min(1024).optional(),
  /**
   * Stream the answer (Server-Sent Events). Off unless asked: agent steps are non-streaming by
   * contract, and not every server streams tool calls well.
   */
  stream: z.boolean().optional(),
  /** While streaming, how long without a chunk before the request is given up and retried. */
  stream_idle_seconds: z.number().positive().max(3600).optional(),
  /**
   * The model writes its tool calls into its answer's text (a server without a tool parser for it):
   * an answer with no native calls is read for calls in its final block. Off unless asked, so that
   * a call a model merely quotes (echoed file content) is never executed.
   */
  text_tool_calls: z.boolean().optional(),
});

/** What stream_idle_seconds is when not given. */
export const DEFAULT_STREAM_IDLE_SECONDS = 60;

export type ModelOptions = z.infer<typeof modelOptionsSchema>;

const modelOptionsFileSchema = z.record(z.string().min(1), modelOptionsSchema);

export type ModelOptionsTable = Readonly<Record<string, ModelOptions>>;

/** ACA_MODEL_OPTIONS names a file that cannot be read or does not hold valid options. */
export class ModelOptionsFileError extends UserInputError {
  constructor(
    readonly file: string,
    /** The key path of the first problem, e.g. `gpt-4o.temperature`; empty for the file as a whole. */
    readonly key: string,
    readonly problem: string,
  ) {
    super(`ACA_MODEL_OPTIONS file ${file}${key ? `, key "${key}"` : ''}: ${problem}`);
  }
}

export function parseModelOptionsFile(file: string): ModelOptionsTable {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ModelOptionsFileError(
      file,
      '',
      `cannot be read (${(err as NodeJS.ErrnoException).code ?? err})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ModelOptionsFileError(file, '', `is not JSON (${(err as Error).message})`);
  }
  const parsed = modelOptionsFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const key = [...issue.path, ...unknownKeys.slice(0, 1)].map(String).join('.');
    throw new ModelOptionsFileError(file, key, issue.message);
  }
  return parsed.data;
}

/** The options of `model`: its own entry over the `*` entry. */
export function optionsForModel(table: ModelOptionsTable, model: string): ModelOptions {
  return { ...table['*'], ...table[model] };
}
