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
import * as os from 'node:os';
import * as path from 'node:path';
import type { ClientConfig, Pool, PoolConfig } from 'pg';
import { lockDataDir } from './data-dir-lock';
import { PgliteThread, PgliteThreadConnection } from './pglite-thread';

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

async function startPglite(dir: string, afterClose: () => Promise<void>): Promise<PglitePool> {
  // The database runs on a thread of its own (see pglite-thread.ts); loaded lazily, because the
  // WebAssembly build is large and unused when DATABASE_URL is set.
  const thread = await PgliteThread.open(dir);
  const { Client, Pool } = await import('pg');
  class PgliteClient extends Client {
    constructor(config?: ClientConfig) {
      super({ ...config, connection: new PgliteThreadConnection(thread) } as ClientConfig);
    }
  }
  // One client at a time: PGlite is a single session, so the pool serializes callers (and their
  // transactions) instead of interleaving them on it.
  const pool = new Pool({ Client: PgliteClient, max: 1 } as PoolConfig);
  pool.on('error', () => undefined);
  return {
    pool,
    close: async () => {
      try {
        await thread.close();
      } finally {
        await afterClose();
      }
    },
  };
}
