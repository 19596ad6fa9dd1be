/**
 * Failure-memory errors say whether trying again can help, because that is the only thing a
 * Temporal activity needs to decide: a lost connection heals when the server returns (retry with
 * backoff), a broken SQL statement or a violated constraint never does (fail now).
 *
 * The memory activities turn `retryable` into the failure types Temporal acts on
 * (FAILURE_TYPES.memoryUnavailable and memoryQueryError in src/shared/failure-types.ts).
 */
import { SystemError } from '../shared/errors';

export class MemoryError extends SystemError {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** SQLSTATE or Node error code of the underlying error, when there was one. */
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message);
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** The database could not be reached or dropped the connection; the same call may work later. */
export class MemoryUnavailableError extends MemoryError {
  constructor(message: string, code: string | undefined, options?: { cause?: unknown }) {
    super(message, true, code, options);
  }
}

/** The database answered and refused (SQL error, constraint, bad input): retrying cannot help. */
export class MemoryQueryError extends MemoryError {
  constructor(message: string, code: string | undefined, options?: { cause?: unknown }) {
    super(message, false, code, options);
  }
}

/** Another live process holds the embedded database's data folder (PGlite is single-process). */
export class MemoryLockedError extends MemoryError {
  constructor(
    message: string,
    readonly holderPid: number,
  ) {
    super(message, false, 'ACA_MEMORY_LOCKED');
  }
}

/** Node socket errors that mean "nobody answered" or "the line went dead". */
const RETRYABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that describe the server's condition rather than our statement: shutdowns and
 * restarts (57P01-57P03), too many connections or no memory (53xxx), lost serialization races
 * (40001, 40P01) and lock timeouts (55P03). Class 08 (connection exception) is matched by prefix.
 */
const RETRYABLE_SQLSTATES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53000',
  '53100',
  '53200',
  '53300',
  '53400',
  '40001',
  '40P01',
  '55P03',
  '58000',
  '58030',
]);

/** pg reports some connection losses only in prose, without a code. */
const RETRYABLE_MESSAGES = [
  /connection terminated/i,
  /connection (?:was )?(?:closed|reset|refused)/i,
  /timeout exceeded when trying to connect/i,
  /client has encountered a connection error/i,
  /server closed the connection unexpectedly/i,
  /terminating connection/i,
  /socket hang up/i,
  /query read timeout/i,
];

/** Not `instanceof Error`: PGlite's errors come from another module realm under Jest. */
function messageOf(err: unknown): string {
  if (
    err &&
    typeof err === 'object' &&
    'message' in err &&
    typeof (err as { message: unknown }).message === 'string'
  ) {
    return (err as { message: string }).message || String(err);
  }
  return String(err);
}

function errorCode(err: unknown): string | undefined {
  if (err && typeof err === 'object' && 'code' in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === 'string' && code) return code;
  }
  return undefined;
}

/** True when the error means the database was unreachable, not that our SQL was wrong. */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof MemoryError) return err.retryable;
  // pg-pool's connect() can reject with an AggregateError when every resolved address failed.
  if (err instanceof AggregateError) return err.errors.some(isConnectionError);
  const code = errorCode(err);
  // The embedded database's socket file is gone while its thread is down (or not yet up).
  if (code === 'ENOENT' && (err as { syscall?: unknown }).syscall === 'connect') return true;
  if (code) {
    if (RETRYABLE_NODE_CODES.has(code) || RETRYABLE_SQLSTATES.has(code) || code.startsWith('08')) return true;
    // Any other SQLSTATE (five characters) is the server refusing our statement.
    if (/^[0-9A-Z]{5}$/.test(code)) return false;
  }
  return RETRYABLE_MESSAGES.some((re) => re.test(messageOf(err)));
}

/** Wraps any database error as a MemoryError whose `retryable` tells the activity what to do. */
export function toMemoryError(err: unknown, action: string, subject = 'failure memory'): MemoryError {
  if (err instanceof MemoryError) return err;
  const code = errorCode(err);
  const detail = messageOf(err);
  if (isConnectionError(err)) {
    return new MemoryUnavailableError(`${subject} unavailable while trying to ${action}: ${detail}`, code, {
      cause: err,
    });
  }
  return new MemoryQueryError(`${subject} could not ${action}: ${detail}${code ? ` (${code})` : ''}`, code, {
    cause: err,
  });
}

/** Convenience for callers that only hold `unknown`. */
export function isRetryableMemoryError(err: unknown): boolean {
  return err instanceof MemoryError ? err.retryable : isConnectionError(err);
}
