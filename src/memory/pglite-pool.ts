/**
 * The embedded backend: PGlite (Postgres compiled to WebAssembly, running in this process)
 * behind a real `pg.Pool`, so failure-repository.ts runs the same SQL as against a server.
 *
 * Layout of the data folder:
 *   <dataDir>/pgdata/          the Postgres cluster (survives restarts; PGlite replays its WAL
 *                              after a crash)
 *   <dataDir>/aca-memory.lock  who holds it (see data-dir-lock.ts)
 *
 * One process at a time: the worker owns the folder while it runs. A second opener gets
 * MemoryLockedError, or, when it only wants to read (`aca memory search`), a private copy of
 * the folder taken at that moment (see openPgliteSnapshot).
 */
import * as fs from 'node:fs';
import { Module } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Pool } from 'pg';
import { lockDataDir } from './data-dir-lock';

export interface PglitePool {
  pool: Pool;
  /** Ends the pool's PGlite instance and gives the folder back. Call after pool.end(). */
  close(): Promise<void>;
}

export function pgdataDir(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'pgdata');
}

/** Opens (creating if needed) the embedded database in `dataDir`, holding its lock. */
export async function openPglitePool(dataDir: string): Promise<PglitePool> {
  fs.mkdirSync(pgdataDir(dataDir), { recursive: true });
  const lock = await lockDataDir(dataDir);
  try {
    return await startPglite(pgdataDir(dataDir), async () => lock.release());
  } catch (err) {
    lock.release();
    throw err;
  }
}

/**
 * Opens a throw-away copy of a folder another process holds. Copying a live cluster is what a
 * crash looks like to Postgres, and it recovers from that with its WAL; writes made by the
 * holder after the copy are not seen, and nothing written to the copy is kept.
 */
export async function openPgliteSnapshot(dataDir: string): Promise<PglitePool> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-memory-snapshot-'));
  const remove = async () => fs.rmSync(tmp, { recursive: true, force: true });
  try {
    fs.cpSync(pgdataDir(dataDir), path.join(tmp, 'pgdata'), { recursive: true });
    // A copied postmaster.pid would make the copy look like a running server.
    fs.rmSync(path.join(tmp, 'pgdata', 'postmaster.pid'), { force: true });
    return await startPglite(path.join(tmp, 'pgdata'), remove);
  } catch (err) {
    await remove();
    throw err;
  }
}

type PgliteModule = typeof import('@electric-sql/pglite');
type TrgmModule = typeof import('@electric-sql/pglite/contrib/pg_trgm');
type AdapterModule = typeof import('@electric-sql/pglite/node-postgres');

/**
 * PGlite's CommonJS build loads Node built-ins (fs, zlib, stream) with dynamic import().
 * Jest runs test code in a VM where dynamic import() throws unless Node was started with
 * --experimental-vm-modules, and it replaces require (and createRequire) with its own. So
 * PGlite is loaded through Node's real loader: a Module's own require(), which Jest leaves
 * alone. Outside Jest this is exactly what a plain require() does.
 */
function nodeRequire<T>(id: string): T {
  return new Module(__filename).require(require.resolve(id)) as T;
}

async function startPglite(dir: string, afterClose: () => Promise<void>): Promise<PglitePool> {
  // Loaded lazily: the WebAssembly build is large and unused when DATABASE_URL is set.
  const { PGlite } = nodeRequire<PgliteModule>('@electric-sql/pglite');
  const { pg_trgm } = nodeRequire<TrgmModule>('@electric-sql/pglite/contrib/pg_trgm');
  const { createPgConfig } = nodeRequire<AdapterModule>('@electric-sql/pglite/node-postgres');
  const { Pool } = await import('pg');
  // pg_trgm ships as a separate bundle that has to be handed to PGlite at start.
  const db = await PGlite.create(dir, { extensions: { pg_trgm } });
  // createPgConfig sets poolSize 1: PGlite is a single connection, so the pool serializes
  // callers (and their transactions) instead of interleaving them on one session.
  const pool = new Pool(createPgConfig(db));
  pool.on('error', () => undefined);
  return {
    pool,
    close: async () => {
      try {
        // The pool does not own the instance (createPgConfig's contract); close it ourselves.
        await db.close();
      } finally {
        await afterClose();
      }
    },
  };
}
