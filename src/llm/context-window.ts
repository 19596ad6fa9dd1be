import type { ModelOptions } from './model-options';

/**
 * Context windows (prompt and answer together, in tokens) of models people point aca at, matched
 * on the name after any provider prefix (`openai/gpt-4o`), Ollama tags included (`qwen2.5-coder:7b`).
 * Figures are the providers' published windows, the smaller one where a family differs (llama3
 * before 3.1, qwen2.5-coder without YaRN).
 */
const CONTEXT_WINDOWS: Array<[RegExp, number]> = [
  [/^gpt-4o-mini\b/, 128_000],
  [/^gpt-4o\b/, 128_000],
  [/^gpt-4\.1/, 1_000_000],
  [/^gpt-5/, 400_000],
  [/^o3\b/, 200_000],
  [/^o4-mini\b/, 200_000],
  [/^llama3[.:-]?[123]\b/, 131_072],
  [/^llama3/, 8_192],
  [/^qwen2\.5-coder/, 32_768],
  [/^deepseek/, 65_536],
];

/** For a model the table does not know: small enough for most local servers' settings. */
export const DEFAULT_CONTEXT_TOKENS = 32_768;

/** What is kept free for the answer when the options do not name max_completion_tokens. */
const DEFAULT_ANSWER_TOKENS = 8_192;

export interface ContextBudget {
  /** The model's whole window. */
  contextTokens: number;
  /** Kept free for the answer: the prompt may use `contextTokens - answerTokens`. */
  answerTokens: number;
}

export function contextWindowOf(model: string): number {
  const name = model.toLowerCase().split('/').pop() ?? '';
  return CONTEXT_WINDOWS.find(([pattern]) => pattern.test(name))?.[1] ?? DEFAULT_CONTEXT_TOKENS;
}

export function contextBudgetFor(model: string, options: ModelOptions = {}): ContextBudget {
  const contextTokens = options.context_tokens ?? contextWindowOf(model);
  // A configured answer limit is what the server reserves too; never let it take the whole window.
  const answerTokens =
    options.max_completion_tokens !== undefined
      ? Math.min(options.max_completion_tokens, Math.floor(contextTokens / 2))
      : Math.min(DEFAULT_ANSWER_TOKENS, Math.floor(contextTokens / 4));
  return { contextTokens, answerTokens };
}
