/**
 * Chooses the failure-memory backend and brings its schema up to date.
 *
 *   databaseUrl given (DATABASE_URL)  -> a pg.Pool on that server; any number of processes.
 *   otherwise                         -> embedded PGlite in `dataDir`
 *                                        (default ${ACA_HOME:-~/.aca}/memory); ONE process at a
 *                                        time, normally the worker, which should open it once
 *                                        at start and close it at shutdown.
 *
 * Both are reached through pg's Pool interface, so the repository's SQL is identical.
 */
import * as path from 'node:path';
import type { Pool } from 'pg';
import { PgFailureRepository, type FailureMemory } from './failure-repository';
import { applyMigrations } from './migrations';
import { MemoryLockedError, toMemoryError } from './memory-errors';
import { openPglitePool, openPgliteSnapshot, type PglitePool } from './pglite-pool';
import { createPostgresPool, describeUrl } from './postgres-pool';

/** Where failure memory lives: a Postgres server, or the embedded database's folder. */
export type MemoryLocation = { databaseUrl: string } | { dataDir: string };

export interface OpenMemoryOptions {
  /** Postgres only: keep the tables in this schema (created if missing). Tests use one per run. */
  schema?: string;
  /** Postgres only: connections in the pool (default 4; the worker runs few activities at once). */
  maxConnections?: number;
  /** Postgres only: give up on a connection attempt after this long (default 5 s). */
  connectTimeoutMs?: number;
  /**
   * Embedded only: what to do when another process holds the folder. 'fail' (default) throws
   * MemoryLockedError; 'snapshot' opens a private read-only copy (for `aca memory search`
   * while the worker runs).
   */
  ifLocked?: 'fail' | 'snapshot';
}

/** Where the embedded database keeps its files under aca's home folder (ACA_HOME). */
export function embeddedDataDir(home: string): string {
  return path.join(home, 'memory');
}

/** Opens failure memory: the Postgres server at `databaseUrl`, else the embedded one in `dataDir`. */
export async function openFailureMemory(options: OpenMemoryOptions & MemoryLocation): Promise<FailureMemory> {
  if ('databaseUrl' in options) return openPostgres(options.databaseUrl, options);
  return openEmbedded(options.dataDir, options.ifLocked ?? 'fail');
}

async function openPostgres(databaseUrl: string, options: OpenMemoryOptions): Promise<FailureMemory> {
  const pool = await createPostgresPool(databaseUrl, {
    ...options,
    applicationName: 'aca-memory',
  });
  return migrateAndWrap(
    pool,
    describeUrl(databaseUrl, options.schema),
    async () => undefined,
    options.schema,
  );
}

async function openEmbedded(dataDir: string, ifLocked: 'fail' | 'snapshot'): Promise<FailureMemory> {
  let backend: PglitePool;
  let description = `embedded Postgres (PGlite) in ${path.resolve(dataDir)}`;
  let readOnly = false;
  try {
    backend = await openPglitePool(dataDir);
  } catch (err) {
    if (!(err instanceof MemoryLockedError) || ifLocked !== 'snapshot') throw err;
    backend = await openPgliteSnapshot(dataDir);
    description += ` (snapshot; process ${err.holderPid} holds it)`;
    readOnly = true;
  }
  return migrateAndWrap(backend.pool, description, backend.close, undefined, readOnly);
}

async function migrateAndWrap(
  pool: Pool,
  description: string,
  closeBackend: () => Promise<void>,
  schema: string | undefined,
  readOnly = false,
): Promise<FailureMemory> {
  let migrationsApplied: number[];
  try {
    migrationsApplied = await applyMigrations(pool, { schema });
  } catch (err) {
    await pool.end().catch(() => undefined);
    await closeBackend().catch(() => undefined);
    throw toMemoryError(err, 'open failure memory');
  }
  return new PgFailureRepository(pool, { description, onClose: closeBackend, readOnly, migrationsApplied });
}
