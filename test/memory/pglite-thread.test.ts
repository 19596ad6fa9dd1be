/**
 * The embedded database runs on its own thread: pg talks to it as to a server, and the worker's
 * event loop keeps turning while a query runs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openPglitePool, type PglitePool } from '../../src/memory/pglite-pool';
import { isConnectionError } from '../../src/memory/memory-errors';

describe('PGlite on its own thread', () => {
  let dir: string;
  let db: PglitePool;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-pglite-thread-'));
    db = await openPglitePool(dir);
  });
  afterAll(async () => {
    await db?.pool.end();
    await db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers pg queries with pg types, parameters and transactions', async () => {
    const { rows } = await db.pool.query<{ n: number; big: string; t: string; at: Date; nothing: null }>(
      "SELECT $1::int AS n, 9007199254740993::bigint AS big, $2::text AS t, '2026-01-02T03:04:05Z'::timestamptz AS at, NULL AS nothing",
      [41, 'ünïcode ✓'],
    );
    // Exactly what pg gives against a server: int8 as a string, timestamps as Dates.
    expect(rows).toEqual([
      { n: 41, big: '9007199254740993', t: 'ünïcode ✓', at: new Date('2026-01-02T03:04:05Z'), nothing: null },
    ]);

    const client = await db.pool.connect();
    try {
      await client.query('CREATE TABLE IF NOT EXISTS kv (k text PRIMARY KEY, v int)');
      await client.query('BEGIN');
      await client.query('INSERT INTO kv VALUES ($1, $2)', ['a', 1]);
      await client.query('ROLLBACK');
      await client.query('INSERT INTO kv VALUES ($1, $2)', ['b', 2]);
    } finally {
      client.release();
    }
    const kept = await db.pool.query('SELECT k, v FROM kv ORDER BY k');
    expect(kept.rows).toEqual([{ k: 'b', v: 2 }]);
  });

  test("a refused statement is pg's DatabaseError with its SQLSTATE, and the session goes on", async () => {
    await expect(db.pool.query('INSERT INTO kv VALUES ($1, $2)', ['b', 3])).rejects.toMatchObject({
      code: '23505',
    });
    await expect(db.pool.query('SELEC 1')).rejects.toMatchObject({ code: '42601' });
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM kv');
    expect(rows).toEqual([{ n: 1 }]);
  });

  test('a client thrown away inside a transaction leaves the session clean for the next one', async () => {
    const abandoned = await db.pool.connect();
    await abandoned.query('BEGIN');
    await abandoned.query('INSERT INTO kv VALUES ($1, $2)', ['c', 3]);
    // As the pool does after an error: the client is destroyed, like a socket closing.
    abandoned.release(new Error('thrown away'));
    const { rows } = await db.pool.query('SELECT k FROM kv ORDER BY k');
    expect(rows).toEqual([{ k: 'b' }]);
    // Not stuck inside that transaction either: this commits on its own.
    await db.pool.query('INSERT INTO kv VALUES ($1, $2)', ['d', 4]);
    const after = await db.pool.query('SELECT k FROM kv ORDER BY k');
    expect(after.rows).toEqual([{ k: 'b' }, { k: 'd' }]);
    await db.pool.query('DELETE FROM kv WHERE k = $1', ['d']);
  });

  test('the event loop keeps turning while a long query runs', async () => {
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 2);
    const started = performance.now();
    try {
      // A few hundred milliseconds of work inside the database.
      await db.pool.query('SELECT count(*) FROM generate_series(1, 3000000) AS s WHERE s % 7 = 3');
    } finally {
      clearInterval(ticker);
    }
    const took = performance.now() - started;
    expect(took).toBeGreaterThan(100);
    // Run on this thread, the query would block every timer for its whole duration.
    expect(longestGap).toBeLessThan(took / 2);
  });

  test('a database thread that dies reads as a lost connection, not as a refused query', async () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-pglite-thread-'));
    const doomed = await openPglitePool(other);
    try {
      await doomed.pool.query('SELECT 1');
      // Closing the database under the pool is what a crashed thread looks like from here.
      await doomed.close();
      const err = await doomed.pool.query('SELECT 1').then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(isConnectionError(err)).toBe(true);
    } finally {
      await doomed.pool.end().catch(() => undefined);
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});
