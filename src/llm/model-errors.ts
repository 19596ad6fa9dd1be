import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';

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
 */
export function toActivityFailure(err: unknown): Error {
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const detail = `model endpoint answered ${err.status}: ${err.message}`;
    if (PERMANENT_STATUSES.has(err.status)) {
      return ApplicationFailure.create({
        message: detail,
        type: 'ModelRequestRejected',
        nonRetryable: true,
        details: [{ status: err.status }],
      });
    }
    if (err.status === 429) {
      const delay = retryAfterMs(err.headers as Headers | undefined);
      return ApplicationFailure.create({
        message: detail,
        type: 'ModelRateLimited',
        ...(delay !== undefined ? { nextRetryDelay: delay } : {}),
      });
    }
    return ApplicationFailure.create({ message: detail, type: 'ModelServerError' });
  }
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return ApplicationFailure.create({ message: 'model call timed out', type: 'ModelTimeout' });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return ApplicationFailure.create({
      message: `model endpoint unreachable: ${err.message}`,
      type: 'ModelUnreachable',
    });
  }
  return err instanceof Error ? err : new Error(String(err));
}
