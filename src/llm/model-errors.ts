import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { ModelStreamIdleError, ModelStreamIncompleteError } from './stream-answer';
import { FAILURE_TYPES } from '../shared/failure-types';

const PERMANENT_STATUSES = new Set([400, 401, 403, 404, 422]);

function retryAfterMs(headers: Headers | undefined): number | undefined {
  const header = headers?.get?.('retry-after');
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/**
 * Maps a failed model call onto Temporal's retry semantics: a rejected request
 * (bad key, bad request) fails at once, a rate limit waits as long as the server
 * asks, and everything else (5xx, dropped connection, timeout) is retried with backoff.
 * `endpoint` (no credentials in it) is named when it cannot be reached: the user must see which
 * address was tried while the step is retried.
 */
export function toActivityFailure(err: unknown, endpoint?: string): Error {
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const detail = `model endpoint answered ${err.status}: ${err.message}`;
    if (PERMANENT_STATUSES.has(err.status)) {
      return ApplicationFailure.create({
        message: detail,
        type: FAILURE_TYPES.modelRequestRejected,
        nonRetryable: true,
        details: [{ status: err.status }],
      });
    }
    if (err.status === 429) {
      const delay = retryAfterMs(err.headers as Headers | undefined);
      return ApplicationFailure.create({
        message: detail,
        type: FAILURE_TYPES.modelRateLimited,
        ...(delay !== undefined ? { nextRetryDelay: delay } : {}),
      });
    }
    return ApplicationFailure.create({ message: detail, type: FAILURE_TYPES.modelServerError });
  }
  // A silent stream is a timeout of its own kind: retried, as a model that took too long is.
  if (err instanceof ModelStreamIdleError) {
    return ApplicationFailure.create({ message: err.message, type: FAILURE_TYPES.modelTimeout });
  }
  if (err instanceof ModelStreamIncompleteError) {
    return ApplicationFailure.create({ message: err.message, type: FAILURE_TYPES.modelStreamIncomplete });
  }
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return ApplicationFailure.create({ message: 'model call timed out', type: FAILURE_TYPES.modelTimeout });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return ApplicationFailure.create({
      message: `model endpoint unreachable${endpoint ? ` at ${endpoint}` : ''}: ${err.message}`,
      type: FAILURE_TYPES.modelUnreachable,
    });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** How OpenAI, vLLM, llama.cpp and others say a request does not fit the model's context. */
const CONTEXT_TOO_LONG =
  /context_length_exceeded|maximum context length|exceeds? the (?:available )?context (?:size|window|length)|context window of \d+|exceeds limit of \d+|prompt is too long|input is too long|too many (?:input )?tokens/i;

/** The window a context-length error states, in tokens. */
const STATED_LIMIT = [
  /maximum context length is (\d+)/i,
  /exceeds limit of (\d+)/i,
  /context window of (\d+)/i,
];

export interface ContextLengthExceeded {
  /** The model's window when the server said it (OpenAI, vLLM, llama.cpp's n_ctx), else null. */
  statedLimit: number | null;
}

/** Whether a failed model call was refused because the prompt does not fit, and the limit it names. */
export function contextLengthExceeded(err: unknown): ContextLengthExceeded | null {
  if (!(err instanceof OpenAI.APIError)) return null;
  const body = (typeof err.error === 'object' && err.error !== null ? err.error : {}) as Record<
    string,
    unknown
  >;
  // llama.cpp has answered this with 500 in some versions; its error type is unambiguous.
  const llamaCpp = body.type === 'exceed_context_size_error';
  if (!llamaCpp && err.status !== 400 && err.status !== 413) return null;
  const text = `${err.code ?? ''} ${err.message}`;
  if (!llamaCpp && !CONTEXT_TOO_LONG.test(text)) return null;
  const fromBody = typeof body.n_ctx === 'number' && body.n_ctx > 0 ? body.n_ctx : null;
  const fromText = STATED_LIMIT.map((pattern) => pattern.exec(text)?.[1]).find((n) => n !== undefined);
  return { statedLimit: fromBody ?? (fromText ? Number(fromText) : null) };
}

/** A request the server refused because of `tool_choice` (llama.cpp, some vLLM versions). */
export function rejectsToolChoice(err: unknown): boolean {
  return err instanceof OpenAI.BadRequestError && /tool[_ ]choice/i.test(err.message);
}

/**
 * A request the server refused because the model takes no tool definitions at all (Ollama's "does
 * not support tools" for a model without a tool template, llama.cpp without `--jinja`).
 */
export function rejectsTools(err: unknown): boolean {
  return (
    err instanceof OpenAI.APIError &&
    (err.status === 400 || err.status === 500) &&
    /does not support tools|tools param requires|tools? (?:are|is) not supported/i.test(err.message)
  );
}
