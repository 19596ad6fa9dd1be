import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { stdioEnvironment, type McpServerConfig } from './mcp-config';
import { listedTools, type ListedTool } from './listed-tools';
import { clipMiddle } from '../shared/clip-text';
import { untrustedText } from './mcp-result';

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
  | { kind: 'timeout' };

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
/** A single message from a server larger than this closes the connection (the SDK's check). */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

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
    this.connecting ??= this.open().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    this.stderrTail = '';
    const transport = this.transport();
    const client = new Client({ name: 'aca', version: '1' }, { capabilities: {} });
    let up = false;
    client.onclose = () => {
      if (!up) return;
      up = false;
      if (this.client === client) this.client = null;
      if (this.closed) return;
      this.fail(`${this.dropReason ?? 'the server went away'}${this.stderrNote()}`);
      this.dropReason = null;
    };
    // The SDK reports stray problems (an unparsable line) here; the connection stays unless closed.
    client.onerror = () => undefined;
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
      if (!this.closed) this.fail(`${describeError(err)}${this.stderrNote()}`);
    }
  }

  private transport(): Transport {
    const config = this.config;
    if (config.transport === 'http') {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
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
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: options.timeoutMs,
        maxTotalTimeout: options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      return { kind: 'result', result };
    } catch (err) {
      if (options.signal?.aborted) throw err;
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
      if (this.client === client) {
        this.dropReason = reason;
        void client.close().catch(() => undefined);
      }
      throw new McpServerUnavailableError(this.config.name, reason);
    }
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
