/**
 * Every SQL statement on the runs' conversations and full test reports, when they are kept in
 * Postgres (DATABASE_URL set) rather than in files under each worker's ACA_HOME: workers on
 * different hosts share no disk, but they share the database, so a step that another worker
 * saved can be loaded anywhere. The tables come from migrations.ts, like failure memory's.
 *
 * Workflow history still holds only the references; the documents live here.
 *
 * Idempotency: a retried activity saves the same reference again, so every save is an upsert
 * keyed by the reference, and the last save wins, as a file replaced by rename does.
 *
 * Outages: unlike failure memory, whose writes wait in the background, these stores are on the
 * path of every agent step and tool call, and some of those activities have only a few quick
 * Temporal retries. So a call that cannot reach the server tries again itself for a while
 * (`retryUnavailableForMs`) before it fails, which carries a run through a server restart or a
 * failover instead of failing it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool, QueryResultRow } from 'pg';
import type { Conversation, ConversationStore } from './conversation-store';
import { ConversationNotFoundError } from './conversation-store';
import { commandOutputOf, type CommandOutput, type ReportStore } from './report-store';
import { checkRunRef } from '../shared/run-ref';
import type { TestRunReport } from '../shared/types';
import { applyMigrations } from '../memory/migrations';
import { MemoryQueryError, toMemoryError } from '../memory/memory-errors';
import { createPostgresPool, describeUrl } from '../memory/postgres-pool';

const SUBJECT = 'the run store';

/**
 * How long one call waits for an unreachable server. Below the shortest limit of the activities
 * that call the stores (the workspace steps' one-minute start-to-close timeout) with room for a
 * hanging connection attempt.
 */
const DEFAULT_RETRY_UNAVAILABLE_MS = 20_000;

/** One table of documents keyed by reference; the table name never comes from input. */
class PgDocuments {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly table: 'run_conversations' | 'run_reports',
    private readonly what: 'conversation' | 'report',
    private readonly retryUnavailableForMs: number,
  ) {}

  async put(ref: string, body: string): Promise<void> {
    await this.run(
      `save a ${this.what}`,
      `INSERT INTO ${this.table} (ref, body) VALUES ($1, $2)
       ON CONFLICT (ref) DO UPDATE SET body = EXCLUDED.body, updated_at = now()`,
      [checkRunRef(ref, this.what), body],
    );
  }

  async get(ref: string): Promise<string | null> {
    const result = await this.run<{ body: string }>(
      `load a ${this.what}`,
      `SELECT body FROM ${this.table} WHERE ref = $1`,
      [checkRunRef(ref, this.what)],
    );
    return result.rows[0]?.body ?? null;
  }

  async has(ref: string): Promise<boolean> {
    const result = await this.run(`look up a ${this.what}`, `SELECT 1 FROM ${this.table} WHERE ref = $1`, [
      checkRunRef(ref, this.what),
    ]);
    return result.rows.length > 0;
  }

  private async run<R extends QueryResultRow = QueryResultRow>(
    action: string,
    sql: string,
    params: unknown[],
  ) {
    const deadline = Date.now() + this.retryUnavailableForMs;
    for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 4_000)) {
      try {
        const pool = await this.pool();
        return await pool.query<R>(sql, params);
      } catch (err) {
        // Only "the server did not answer" is worth waiting out; every statement here may run twice.
        const error = toMemoryError(err, action, SUBJECT);
        if (!error.retryable || Date.now() + delayMs > deadline) throw error;
        await sleep(delayMs);
      }
    }
  }
}

/** Conversations in Postgres: one row per conversation, rewritten at every step. */
export class PgConversationStore implements ConversationStore {
  private readonly documents: PgDocuments;

  constructor(pool: () => Promise<Pool>, options: { retryUnavailableForMs?: number } = {}) {
    this.documents = new PgDocuments(
      pool,
      'run_conversations',
      'conversation',
      options.retryUnavailableForMs ?? DEFAULT_RETRY_UNAVAILABLE_MS,
    );
  }

  exists(ref: string): Promise<boolean> {
    return this.documents.has(ref);
  }

  async load(ref: string): Promise<Conversation> {
    const body = await this.documents.get(ref);
    if (body === null) throw new ConversationNotFoundError(ref);
    return JSON.parse(body) as Conversation;
  }

  save(conversation: Conversation): Promise<void> {
    return this.documents.put(conversation.ref, JSON.stringify(conversation));
  }
}

/** Full test reports in Postgres: one row per report. */
export class PgReportStore implements ReportStore {
  private readonly documents: PgDocuments;

  constructor(pool: () => Promise<Pool>, options: { retryUnavailableForMs?: number } = {}) {
    this.documents = new PgDocuments(
      pool,
      'run_reports',
      'report',
      options.retryUnavailableForMs ?? DEFAULT_RETRY_UNAVAILABLE_MS,
    );
  }

  saveReport(ref: string, report: TestRunReport): Promise<void> {
    return this.documents.put(ref, JSON.stringify(report));
  }

  async loadReport(ref: string): Promise<TestRunReport | null> {
    const body = await this.documents.get(ref);
    return body === null ? null : (JSON.parse(body) as TestRunReport);
  }

  saveCommandOutput(ref: string, output: CommandOutput): Promise<void> {
    return this.documents.put(ref, JSON.stringify(output));
  }

  async loadCommandOutput(ref: string): Promise<CommandOutput | null> {
    return commandOutputOf(await this.documents.get(ref));
  }
}

/** A worker's conversation and report stores, and what to call when the worker stops. */
export interface RunStores {
  conversations: ConversationStore;
  reports: ReportStore;
  /** Where they are, for logs (never includes a password). */
  description: string;
  close(): Promise<void>;
}

export interface PostgresRunStoreOptions {
  /** Keep the tables in this schema (created if missing). Tests use one per run. */
  schema?: string;
  /**
   * Connections in the pool (default 8): every agent step loads and saves its conversation,
   * and a worker runs many steps at once.
   */
  maxConnections?: number;
  /** Give up on a connection attempt after this long (default 5 s). */
  connectTimeoutMs?: number;
  /** How long a call keeps trying while the server cannot be reached (default 20 s; 0: fail at once). */
  retryUnavailableForMs?: number;
}

/**
 * The Postgres stores of the server at `databaseUrl`. Nothing connects until the first load or
 * save, which also applies missing migrations, so a worker starts while the database is down; a
 * failed opening is tried again by the next call (the activity's retry).
 */
export function openPostgresRunStores(databaseUrl: string, options: PostgresRunStoreOptions = {}): RunStores {
  let opening: Promise<Pool> | null = null;
  let closed = false;
  const open = async (): Promise<Pool> => {
    const pool = await createPostgresPool(databaseUrl, {
      ...options,
      maxConnections: options.maxConnections ?? 8,
      applicationName: 'aca-runs',
    });
    try {
      await applyMigrations(pool, { schema: options.schema });
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw toMemoryError(err, 'apply migrations', SUBJECT);
    }
    return pool;
  };
  const pool = (): Promise<Pool> => {
    if (closed) return Promise.reject(new MemoryQueryError(`${SUBJECT} is closed`, undefined));
    opening ??= open().catch((err: unknown) => {
      opening = null;
      throw err;
    });
    return opening;
  };
  return {
    conversations: new PgConversationStore(pool, options),
    reports: new PgReportStore(pool, options),
    description: describeUrl(databaseUrl, options.schema),
    async close() {
      closed = true;
      const opened = await opening?.catch(() => null);
      opening = null;
      await opened?.end();
    },
  };
}
