import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { stdioEnvironment, type McpServerConfig } from './mcp-config';
import { listedTools, type ListedTool } from './listed-tools';
import { clipMiddle } from '../shared/clip-text';
import { untrustedText } from './mcp-result';
import {
  bytesInWords,
  CallGuard,
  guardedBy,
  MAX_MESSAGE_BYTES,
  McpAnswerTooLargeError,
  outsideAnyCall,
} from './answer-guard';
import { boundedFetch } from './bounded-fetch';

/**
 * One configured MCP server as a worker keeps it: connected at start, its tools listed, and
 * connected again (with growing waits) whenever it exits or cannot be reached, until closed.
 */

/** A call that cannot be made because the server is down: worth retrying, here or elsewhere. */
export class McpServerUnavailableError extends Error {
  constructor(
    readonly server: string,
    readonly reason: string,
  ) {
    super(`MCP server "${server}" is not available: ${reason}`);
  }
}

export type McpCallOutcome =
  | { kind: 'result'; result: unknown }
  /** The server answered the call with a protocol error (unknown tool, bad arguments). */
  | { kind: 'error'; message: string }
  | { kind: 'timeout' }
  /** A message over MAX_MESSAGE_BYTES came for the call; `message` says so to the model. */
  | { kind: 'too-large'; message: string };

export interface ConnectionTimings {
  /** How long starting and initialising a server may take. */
  connectTimeoutMs: number;
  /** The first wait before a server that went down is started again; doubled each time after. */
  restartFirstMs: number;
  restartMaxMs: number;
}

export interface ServerState {
  ok: boolean;
  tools: readonly ListedTool[];
  /** Why the server is down (or was last), in one printable line; null when it never failed. */
  error: string | null;
  restarts: number;
}

const STDERR_TAIL_CHARS = 2_000;
const MAX_ERROR_CHARS = 2_000;
/** How long a server must have served for its next restart to wait only the first wait again. */
const STAYED_UP_MS = 60_000;

export class ServerConnection {
  private client: Client | null = null;
  private tools: readonly ListedTool[] = [];
  private error: string | null = null;
  private restarts = 0;
  private connecting: Promise<void> | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private nextWaitMs: number;
  private closed = false;
  private stderrTail = '';
  /** Why the pool closed a connection it found broken, said when the close is noticed. */
  private dropReason: string | null = null;
  /** When the server last came up; null while it has not. */
  private upSince: number | null = null;
  /** The calls in flight, each with the client it was made on. */
  private readonly inFlight = new Map<CallGuard, Client>();

  constructor(
    readonly config: McpServerConfig,
    private readonly timings: ConnectionTimings,
    private readonly log: (message: string) => void,
  ) {
    this.nextWaitMs = timings.restartFirstMs;
  }

  state(): ServerState {
    return { ok: this.client !== null, tools: this.tools, error: this.error, restarts: this.restarts };
  }

  /** Connects unless connected; resolves when connected or failed (the failure is kept). */
  connect(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= outsideAnyCall(() => this.open()).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    this.stderrTail = '';
    const client = new Client({ name: 'aca', version: '1' }, { capabilities: {} });
    const transport = this.transport((error) => this.drop(client, strayReason(error)));
    let up = false;
    client.onclose = () => {
      if (!up) return;
      up = false;
      if (this.client === client) this.client = null;
      if (this.closed) return;
      this.fail(`${this.takeDropReason() ?? 'the server went away'}${this.stderrNote()}`);
    };
    // The SDK reports stray problems (an unparsable line) here; the connection stays unless closed.
    // A stdio line too long is the exception: the SDK closes the connection after saying so.
    client.onerror = (error) => {
      if (this.config.transport === 'stdio' && isLineTooLong(error)) this.lineTooLong(client);
    };
    try {
      await client.connect(transport, { timeout: this.timings.connectTimeoutMs });
      up = true;
      const tools = await listedTools(client, this.config, this.timings.connectTimeoutMs);
      if (this.closed) {
        await client.close();
        return;
      }
      this.client = client;
      this.tools = tools;
      this.error = null;
      this.upSince = Date.now();
    } catch (err) {
      up = false;
      await client.close().catch(() => undefined);
      const reason = this.takeDropReason() ?? describeError(err);
      if (!this.closed) this.fail(`${reason}${this.stderrNote()}`);
    }
  }

  /** The server's transport; `onStrayOversize` hears of a message too large that no call waits for. */
  private transport(onStrayOversize: (error: McpAnswerTooLargeError) => void): Transport {
    const config = this.config;
    if (config.transport === 'http') {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
        fetch: boundedFetch({ maxMessageBytes: MAX_MESSAGE_BYTES, onStrayOversize }),
      });
    }
    const transport = new StdioClientTransport({
      command: config.command,
      args: [...config.args],
      env: stdioEnvironment(config),
      cwd: config.cwd,
      stderr: 'pipe',
      maxBufferSize: MAX_MESSAGE_BYTES,
    });
    // Kept only as a short tail for the reason a server failed; never logged as it comes.
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    return transport;
  }

  /**
   * A stdio line over MAX_MESSAGE_BYTES: the SDK stops reading and closes the connection (the
   * stream is broken mid-message), and the pool starts the server again. Which call the line
   * answered cannot be told before its end, so every call waiting on this connection is given up
   * as too large: retried, each would only be asked for the same answer again.
   */
  private lineTooLong(client: Client): void {
    const error = new McpAnswerTooLargeError(MAX_MESSAGE_BYTES);
    this.dropReason = `${error.message}, so it was stopped`;
    for (const [guard, madeOn] of this.inFlight) if (madeOn === client) guard.trip(error);
  }

  /** Closes a connection found broken, saying why when the close is noticed. */
  private drop(client: Client, reason: string): void {
    this.dropReason = reason;
    void client.close().catch(() => undefined);
  }

  private takeDropReason(): string | null {
    const reason = this.dropReason;
    this.dropReason = null;
    return reason;
  }

  private stderrNote(): string {
    const tail = this.stderrTail.trim();
    return tail ? `; its stderr ends: ${oneLineOf(tail).slice(-500)}` : '';
  }

  private fail(reason: string): void {
    this.error = reasonLine(reason);
    this.log(`MCP server "${this.config.name}" is down: ${this.error}`);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.closed || this.restartTimer) return;
    // A server that served a while starts over from the first wait; one that keeps dying as soon
    // as it is up is waited for longer each time.
    if (this.upSince !== null && Date.now() - this.upSince >= STAYED_UP_MS) {
      this.nextWaitMs = this.timings.restartFirstMs;
    }
    this.upSince = null;
    const wait = this.nextWaitMs;
    this.nextWaitMs = Math.min(this.timings.restartMaxMs, wait * 2);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.restarts += 1;
      void this.connect();
    }, wait);
    this.restartTimer.unref();
  }

  /** Calls a tool; throws McpServerUnavailableError when the server is down or goes down meanwhile. */
  async call(
    tool: string,
    args: Record<string, unknown>,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<McpCallOutcome> {
    // A (re)start under way is waited for: a call retried just after a crash finds the server back.
    if (!this.client && this.connecting) await this.connecting;
    const client = this.client;
    if (!client) throw new McpServerUnavailableError(this.config.name, this.error ?? 'not started');
    const guard = new CallGuard();
    const given = options.signal;
    // The caller's signal gives the call up too, with the caller's reason.
    const forward = () => guard.cancel(given?.reason);
    given?.addEventListener('abort', forward, { once: true });
    if (given?.aborted) forward();
    this.inFlight.set(guard, client);
    try {
      const result = await guardedBy(guard, () =>
        client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: options.timeoutMs,
          maxTotalTimeout: options.timeoutMs,
          signal: guard.signal,
        }),
      );
      return { kind: 'result', result };
    } catch (err) {
      if (given?.aborted) throw err;
      if (guard.tooLarge) return { kind: 'too-large', message: this.tooLargeAnswer(guard.tooLarge) };
      if (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number))
        return { kind: 'timeout' };
      if (err instanceof McpError && err.code !== (ErrorCode.ConnectionClosed as number)) {
        return { kind: 'error', message: clipMiddle(untrustedText(err.message), MAX_ERROR_CHARS) };
      }
      // The server answered, just not with a tool result: an answer, since the tool may have acted
      // (taken for a server that is down, the call would be retried and the tool run again).
      if (isSchemaError(err)) {
        return {
          kind: 'error',
          message: `the server's answer is not a tool result: ${reasonLine((err as Error).message)}`,
        };
      }
      // Closed under the call, or (HTTP) not reached: the server, not the call, is at fault. The
      // connection is started afresh: an HTTP server that restarted knows the old session no more.
      const reason = reasonLine(describeError(err));
      if (this.client === client) this.drop(client, reason);
      throw new McpServerUnavailableError(this.config.name, reason);
    } finally {
      this.inFlight.delete(guard);
      given?.removeEventListener('abort', forward);
    }
  }

  private tooLargeAnswer(error: McpAnswerTooLargeError): string {
    const limit = bytesInWords(error.limitBytes);
    const what =
      this.config.transport === 'stdio'
        ? `the MCP server sent a message over ${limit} while this call waited for its answer (the answer itself, or another call's at the same moment); aca reads no message that large, so the server was stopped and is started again`
        : `the MCP server's answer is over ${limit}, more than aca reads; it was not read`;
    return `${what}. The tool may have acted. Ask it for less (a narrower query, fewer results, a smaller page).`;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => undefined);
  }
}

/** Why a connection is closed after a message too large that no call waited for. */
function strayReason(error: McpAnswerTooLargeError): string {
  return `${error.message} outside any tool call, so the connection was closed`;
}

/**
 * The SDK's error for a stdio line longer than its buffer (`maxBufferSize`), after which it closes
 * the connection. Known only by its message: the SDK gives it no type or code of its own.
 */
function isLineTooLong(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('ReadBuffer exceeded maximum size');
}

/** The SDK's error for an answer that does not fit the protocol's schema (a zod error, duck-typed). */
function isSchemaError(err: unknown): boolean {
  return (
    err instanceof Error &&
    Array.isArray((err as { issues?: unknown }).issues) &&
    /ZodError/.test(err.name || err.constructor.name)
  );
}

/** An error's message and code, duck-typed: fetch's errors come from another realm than Error. */
function errorParts(err: unknown): { message: string; code: string | null; cause: unknown } | null {
  if (typeof err !== 'object' || err === null || typeof (err as Error).message !== 'string') return null;
  const { message, code, cause } = err as Error & { code?: unknown };
  return { message, code: typeof code === 'string' ? code : null, cause };
}

function describeError(err: unknown): string {
  if (err instanceof McpError && err.code === (ErrorCode.ConnectionClosed as number)) {
    return 'the server closed the connection (exited?)';
  }
  const parts = errorParts(err);
  if (!parts) return String(err);
  // fetch says only "fetch failed"; the reason (ECONNREFUSED, a certificate) is its cause.
  const cause = errorParts(parts.cause);
  const why = parts.code ?? cause?.code ?? cause?.message ?? null;
  return why ? `${parts.message} (${why})` : parts.message;
}

function oneLineOf(text: string): string {
  return untrustedText(text).replace(/\s+/g, ' ').trim();
}

/**
 * Why a server is down, as the worker's log, its start lines, `aca doctor` and workflow history
 * show it: one printable line of at most MAX_ERROR_CHARS. The reason can quote the server (an HTTP
 * error's body, its stderr), which may send megabytes of escapes.
 */
function reasonLine(text: string): string {
  // Clipped before escaping too, so a huge body costs no more than its kept part.
  return clipMiddle(oneLineOf(clipMiddle(text, 2 * MAX_ERROR_CHARS)), MAX_ERROR_CHARS).replace(/\n/g, ' ');
}
