import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How big a message from an MCP server may be, and what a tool call does when one is bigger. A
 * server is not trusted: without a bound, one answer of gigabytes would be read whole into the
 * worker's memory. A message over the bound is not read; the call waiting for it is given up at
 * once and answered as too large (an answer, not a server that is down: retried, the call would
 * only ask for the same answer again).
 */

/** The most bytes of one message read from a server: a stdio line, an HTTP JSON body, an SSE event. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

export class McpAnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`a message over ${bytesInWords(limitBytes)} came from the server, more than aca reads`);
    this.name = 'McpAnswerTooLargeError';
  }
}

export function bytesInWords(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** One tool call in flight: whether a message too large was met for it, and the signal that gives it up. */
export class CallGuard {
  private readonly controller = new AbortController();
  private tripped: McpAnswerTooLargeError | null = null;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The message too large that gave the call up; null while none did. */
  get tooLarge(): McpAnswerTooLargeError | null {
    return this.tripped;
  }

  /** Gives the call up for a message too large (the first one counts; later ones change nothing). */
  trip(error: McpAnswerTooLargeError): void {
    if (this.tripped) return;
    this.tripped = error;
    this.controller.abort(error);
  }

  /** Gives the call up for another reason (the caller's cancellation). */
  cancel(reason: unknown): void {
    this.controller.abort(reason);
  }
}

/**
 * The call each HTTP request belongs to. The SDK makes a call's request (and reads its answer) in
 * the call's own asynchronous context, so the fetch it is given can tell which call an answer too
 * large is for without any of the SDK's private state.
 */
const callInFlight = new AsyncLocalStorage<CallGuard>();

export function guardedBy<T>(guard: CallGuard, work: () => Promise<T>): Promise<T> {
  return callInFlight.run(guard, work);
}

/** The call whose context this is, if any. */
export function currentCallGuard(): CallGuard | undefined {
  return callInFlight.getStore();
}

/**
 * Runs `work` outside any call: a connection (re)started from a call's context (its failure
 * closed the connection) must not have its own requests taken for that call's.
 */
export function outsideAnyCall<T>(work: () => T): T {
  return callInFlight.exit(work);
}
