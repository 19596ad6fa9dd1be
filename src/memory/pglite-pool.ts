/**
 * The embedded backend: PGlite (Postgres compiled to WebAssembly, running on a thread of this
 * process) served on a unix socket, reached by the same `pg.Pool` as a Postgres server, so
 * failure-repository.ts runs the same SQL over the same connection code on both.
 *
 * Layout of the data folder:
 *   <dataDir>/pgdata/          the Postgres cluster (survives restarts; PGlite replays its WAL
 *                              after a crash)
 *   <dataDir>/aca-memory.lock  who holds it (see data-dir-lock.ts)
 *   <dataDir>/socket/          0700; the socket pg connects to while the holder runs
 *
 * One process at a time: the worker owns the folder while it runs. A second opener gets
 * MemoryLockedError, or, when it only wants to read (`aca memory search`), a private copy of
 * the folder taken at that moment (see openPgliteSnapshot).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Pool } from 'pg';
import { programLookup } from '../config';
import { clusterTemplate, type ClusterTemplate } from './cluster-template';
import { lockDataDir } from './data-dir-lock';
import { PgliteServer, SOCKET_PORT } from './pglite-server';

export interface PglitePool {
  pool: Pool;
  /** Ends the pool's PGlite instance and gives the folder back. Call after pool.end(). */
  close(): Promise<void>;
}

export function pgdataDir(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'pgdata');
}

function socketDir(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'socket');
}

/**
 * Connections in the pool. PGlite runs one statement at a time whatever the number, but with a
 * few connections a caller waits in the server's queue, where its exchange runs as soon as the
 * previous one ends, rather than for a pool client to come back across the thread boundary.
 */
const POOL_SIZE = 4;

/** Opens (creating if needed) the embedded database in `dataDir`, holding its lock. */
export async function openPglitePool(dataDir: string): Promise<PglitePool> {
  fs.mkdirSync(pgdataDir(dataDir), { recursive: true });
  const lock = await lockDataDir(dataDir);
  try {
    return await startPglite(
      pgdataDir(dataDir),
      socketDir(dataDir),
      async () => lock.release(),
      clusterTemplate(programLookup().cacheHome),
    );
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
    return await startPglite(path.join(tmp, 'pgdata'), path.join(tmp, 'socket'), remove);
  } catch (err) {
    await remove();
    throw err;
  }
}

async function startPglite(
  dir: string,
  socketFolder: string,
  afterClose: () => Promise<void>,
  /** Where a new cluster starts from (none for a copy of an existing one). */
  template?: ClusterTemplate,
): Promise<PglitePool> {
  const server = await PgliteServer.start(dir, socketFolder, template);
  const { Pool } = await import('pg');
  const pool = new Pool({
    host: server.socketDir,
    port: SOCKET_PORT,
    user: 'postgres',
    database: 'postgres',
    max: POOL_SIZE,
    // No connection or query timeout: PGlite runs one statement at a time, so under load a
    // caller's wait is its place in the queue, not a sign of a dead server, and pg-pool counts
    // the wait for a free client against the connection timeout. Callers bound their own waits
    // (lesson recall's deadline, activity timeouts).
  });
  pool.on('error', () => undefined);
  return {
    pool,
    close: async () => {
      try {
        await server.stop();
      } finally {
        await afterClose();
      }
    },
  };
}
