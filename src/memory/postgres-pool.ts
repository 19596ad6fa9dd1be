/**
 * A `pg.Pool` on a Postgres server, set up the way every aca connection to DATABASE_URL is:
 * bounded waits, an optional schema first on the search path, and no crash when an idle
 * connection loses its server. `pg` is loaded here, on first use, not when aca starts.
 */
import type { Pool } from 'pg';
import { assertSchemaName } from './migrations';

export interface PostgresPoolOptions {
  /** Keep the tables in this schema (created by the migrations if missing). Tests use one per run. */
  schema?: string;
  /** Connections in the pool (default 4). */
  maxConnections?: number;
  /** Give up on a connection attempt after this long (default 5 s). */
  connectTimeoutMs?: number;
  /** Shown in pg_stat_activity. */
  applicationName: string;
}

export async function createPostgresPool(databaseUrl: string, options: PostgresPoolOptions): Promise<Pool> {
  if (options.schema !== undefined) assertSchemaName(options.schema);
  const { Pool } = await import('pg');
  const pool = new Pool({
    connectionString: databaseUrl,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    // Idle connections are closed soon, so fewer of them are found dead after an outage.
    idleTimeoutMillis: 10_000,
    keepAlive: true,
    // A server that accepts but never answers must not hang an activity forever.
    query_timeout: 30_000,
    application_name: options.applicationName,
    // public stays on the path because pg_trgm's functions usually live there.
    ...(options.schema !== undefined ? { options: `-c search_path=${options.schema},public` } : {}),
  });
  // An idle connection that loses its server emits 'error' on the pool; without a listener
  // Node would crash the worker. The pool has already dropped that connection, and the next
  // query opens a new one, which is all recovery needs.
  pool.on('error', () => undefined);
  return pool;
}

/** The URL without its password, for messages. */
export function describeUrl(databaseUrl: string, schema: string | undefined): string {
  let shown = 'Postgres';
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    shown = `Postgres at ${url.toString()}`;
  } catch {
    // Not a URL (e.g. a libpq key=value string): show nothing that might hold a password.
  }
  return schema ? `${shown} (schema ${schema})` : shown;
}
