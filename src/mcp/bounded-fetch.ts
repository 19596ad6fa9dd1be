import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { currentCallGuard, McpAnswerTooLargeError } from './answer-guard';

/**
 * The fetch a streamable HTTP server is reached with: every response body is read through a
 * counter, so no answer of the server's is read past a bound. The SDK itself would read a JSON
 * answer whole, and an SSE event as long as the server sends it.
 *
 * - A JSON (or any other) body may be at most `maxMessageBytes` in all.
 * - An event stream may go on for as long as the server keeps it open (a server's own stream is
 *   meant to), but each event may be at most `maxMessageBytes`.
 * - An error's body (a status that is not 2xx) is only shown as the reason the server is down, in
 *   one clipped line: it is cut quietly at ERROR_BODY_BYTES.
 *
 * Past the bound the body is broken off (the connection is closed, so the server stops sending)
 * and the call it belongs to is given up as too large; an event too large on the server's own
 * stream, which no call waits for, goes to `onStrayOversize`.
 */

const ERROR_BODY_BYTES = 64 * 1024;
/** Statuses whose responses have no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const LF = 0x0a;
const CR = 0x0d;

export interface BoundedFetchOptions {
  maxMessageBytes: number;
  /** A message too large that belongs to no call: the server's own event stream. */
  onStrayOversize(error: McpAnswerTooLargeError): void;
  /** The fetch underneath (the global one by default). */
  base?: FetchLike;
}

export function boundedFetch(options: BoundedFetchOptions): FetchLike {
  const base = options.base ?? ((url, init) => fetch(url, init));
  return async (url, init) => {
    const guard = currentCallGuard();
    // A call given up for an answer too large opens no stream to read it again: the SDK resumes a
    // broken event stream with a GET, as often as a hostile server breaks it.
    if (guard?.tooLarge && (init?.method ?? 'GET').toUpperCase() === 'GET') throw guard.tooLarge;
    const response = await base(url, init);
    const body = response.body;
    if (!body) return response;
    if (NULL_BODY_STATUSES.has(response.status)) {
      await body.cancel().catch(() => undefined);
      return withBody(response, null);
    }
    if (!response.ok) return withBody(response, cutAt(body, ERROR_BODY_BYTES));
    const tooLarge = () => {
      const error = new McpAnswerTooLargeError(options.maxMessageBytes);
      if (guard) guard.trip(error);
      else options.onStrayOversize(error);
      return error;
    };
    // The SDK picks the way it reads a body by the same part of the same header.
    const counter = isEventStream(response.headers.get('content-type'))
      ? new EventBytes(options.maxMessageBytes)
      : new TotalBytes(options.maxMessageBytes);
    return withBody(response, bounded(body, counter, tooLarge));
  };
}

/**
 * Whether a Content-Type names an event stream. The SDK takes the media type as the part before
 * the first `;`, trimmed and lowercased (or none at all), so it reads a body as events exactly
 * when this says so; any other body is bounded as a whole, which is never looser.
 */
function isEventStream(contentType: string | null): boolean {
  return (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase() === 'text/event-stream';
}

/** A copy of `response` with another body; its URL kept (the SDK names a redirect's target by it). */
function withBody(response: Response, body: ReadableStream<Uint8Array> | null): Response {
  const copy = new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  Object.defineProperty(copy, 'url', { value: response.url });
  return copy;
}

interface ByteCounter {
  /** Counts a chunk; true when it takes a message over the bound. */
  overflows(chunk: Uint8Array): boolean;
}

class TotalBytes implements ByteCounter {
  private total = 0;
  constructor(private readonly limit: number) {}
  overflows(chunk: Uint8Array): boolean {
    this.total += chunk.byteLength;
    return this.total > this.limit;
  }
}

/**
 * The bytes of the event being received, counted from the last blank line, which ends an event
 * (the SSE rules: a line ends at CR, LF or CRLF). Everything the SDK's parser holds at once, the
 * event's data and a line not yet ended, is within those bytes.
 */
class EventBytes implements ByteCounter {
  private eventBytes = 0;
  private lineBytes = 0;
  private afterCR = false;
  constructor(private readonly limit: number) {}

  overflows(chunk: Uint8Array): boolean {
    for (let i = 0; i < chunk.length; i += 1) {
      const byte = chunk[i]!;
      const wasCR = this.afterCR;
      this.afterCR = byte === CR;
      // The LF of a CRLF: the line ended at its CR.
      if (byte === LF && wasCR) continue;
      if (byte === CR || byte === LF) {
        if (this.lineBytes === 0) {
          this.eventBytes = 0;
          continue;
        }
        this.lineBytes = 0;
      } else {
        this.lineBytes += 1;
      }
      // A line's end counts too: each data line adds one to the event's data.
      this.eventBytes += 1;
      if (this.eventBytes > this.limit) return true;
    }
    return false;
  }
}

/** `body` read a chunk at a time as it is asked for, broken off when the counter says so. */
function bounded(
  body: ReadableStream<Uint8Array>,
  counter: ByteCounter,
  tooLarge: () => Error,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        if (!counter.overflows(value)) return controller.enqueue(value);
        const error = tooLarge();
        controller.error(error);
        await reader.cancel(error).catch(() => undefined);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** `body`'s first `maxBytes` bytes, the rest not read. */
function cutAt(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let left = maxBytes;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value.subarray(0, left));
        left -= Math.min(left, value.byteLength);
        if (left > 0) return;
        controller.close();
        await reader.cancel().catch(() => undefined);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
