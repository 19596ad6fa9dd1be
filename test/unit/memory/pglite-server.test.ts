/**
 * The embedded database served on a unix socket from its own thread: pg talks to it as to a
 * server, several connections share its one session without cutting into each other's exchanges
 * or transactions, and the worker's event loop keeps turning while a query runs.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { openPglitePool, type PglitePool } from '../../../src/memory/pglite-pool';
import { PgliteServer, SOCKET_PORT } from '../../../src/memory/pglite-server';
import { isConnectionError } from '../../../src/memory/memory-errors';
import { until } from '../../helpers/until';

/** One frontend message: type byte, then length (itself included), then body. */
function frame(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function startup(): Buffer {
  const body = Buffer.concat([
    Buffer.from([0, 3, 0, 0]),
    Buffer.from('user\0postgres\0database\0postgres\0\0', 'latin1'),
  ]);
  const head = Buffer.alloc(4);
  head.writeInt32BE(body.length + 4, 0);
  return Buffer.concat([head, body]);
}

/** Parse of an unnamed statement with no parameter types. */
function parse(sql: string): Buffer {
  return frame('P', Buffer.concat([Buffer.from(`\0${sql}\0`, 'utf8'), Buffer.from([0, 0])]));
}

/** Bind of the unnamed statement to the unnamed portal, no parameters; Execute; Sync. */
function bindExecuteSync(): Buffer {
  return Buffer.concat([
    frame('B', Buffer.from([0, 0, 0, 0, 0, 0, 0, 0])),
    frame('E', Buffer.from([0, 0, 0, 0, 0])),
    frame('S', Buffer.alloc(0)),
  ]);
}

/** A connection that speaks the protocol by hand, past its startup; `answer` collects the rest. */
async function rawConnection(socketDir: string): Promise<{ socket: net.Socket; answer: () => string }> {
  const socket = net.connect(path.join(socketDir, `.s.PGSQL.${SOCKET_PORT}`));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(startup());
  let seen = Buffer.alloc(0);
  // Past the startup answer (it ends with ReadyForQuery).
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer): void => {
      seen = Buffer.concat([seen, chunk]);
      if (seen.includes(Buffer.from([0x5a, 0, 0, 0, 5]))) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
  });
  let answer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => (answer = Buffer.concat([answer, chunk])));
  return { socket, answer: () => answer.toString('latin1') };
}

/** A raw connection that sends `messages` after its startup and then goes away without a Sync. */
async function leaveMidExchange(socketDir: string, messages: Buffer[]): Promise<void> {
  const { socket } = await rawConnection(socketDir);
  socket.write(Buffer.concat(messages));
  await sleep(200);
  socket.destroy();
}

describe('PGlite on a socket of its own', () => {
  let dir: string;
  let db: PglitePool;
  let socketDir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-pglite-server-'));
    db = await openPglitePool(dir);
    socketDir = path.join(dir, 'socket');
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

  test('the socket sits in a folder only this user can enter', () => {
    expect(fs.statSync(socketDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(socketDir, `.s.PGSQL.${SOCKET_PORT}`)).isSocket()).toBe(true);
  });

  test("a refused statement is pg's DatabaseError with its SQLSTATE, and the session goes on", async () => {
    await expect(db.pool.query('INSERT INTO kv VALUES ($1, $2)', ['b', 3])).rejects.toMatchObject({
      code: '23505',
    });
    await expect(db.pool.query('SELEC 1')).rejects.toMatchObject({ code: '42601' });
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM kv');
    expect(rows).toEqual([{ n: 1 }]);
  });

  test("two pools at once: every parameterized query gets its own answer, not the other's", async () => {
    const other = new Pool({
      host: socketDir,
      port: SOCKET_PORT,
      user: 'postgres',
      database: 'postgres',
      max: 4,
    });
    try {
      // Different shapes: a Bind that met the other pool's unnamed statement would be refused
      // (wrong parameter count) or answer with the other's columns.
      const calls = Array.from({ length: 120 }, (_, i) =>
        i % 2 === 0
          ? db.pool
              .query('SELECT $1::int * 2 AS doubled', [i])
              .then((r) => expect(r.rows).toEqual([{ doubled: i * 2 }]))
          : other
              .query('SELECT $1::text AS a, $2::text AS b', [`a${i}`, `b${i}`])
              .then((r) => expect(r.rows).toEqual([{ a: `a${i}`, b: `b${i}` }])),
      );
      await Promise.all(calls);
    } finally {
      await other.end();
    }
  });

  test("one connection's open transaction is not seen, nor joined, by another's queries", async () => {
    const other = new Pool({
      host: socketDir,
      port: SOCKET_PORT,
      user: 'postgres',
      database: 'postgres',
      max: 1,
    });
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO kv VALUES ($1, $2)', ['tx', 9]);
      let settled = false;
      const outside = other.query<{ n: number }>('SELECT count(*)::int AS n FROM kv WHERE k = $1', ['tx']);
      void outside.then(() => (settled = true));
      await sleep(300);
      // It waits for the transaction to end rather than running inside it.
      expect(settled).toBe(false);
      await client.query('ROLLBACK');
      expect((await outside).rows).toEqual([{ n: 0 }]);
    } finally {
      client.release();
      await other.end();
    }
  });

  test('a client thrown away inside a transaction leaves the session clean for the next one', async () => {
    const abandoned = await db.pool.connect();
    await abandoned.query('BEGIN');
    await abandoned.query('INSERT INTO kv VALUES ($1, $2)', ['c', 3]);
    // As the pool does after an error: the client is destroyed, its socket closed.
    abandoned.release(new Error('thrown away'));
    const { rows } = await db.pool.query('SELECT k FROM kv ORDER BY k');
    expect(rows).toEqual([{ k: 'b' }]);
    // Not stuck inside that transaction either: this commits on its own.
    await db.pool.query('INSERT INTO kv VALUES ($1, $2)', ['d', 4]);
    const after = await db.pool.query('SELECT k FROM kv ORDER BY k');
    expect(after.rows).toEqual([{ k: 'b' }, { k: 'd' }]);
    await db.pool.query('DELETE FROM kv WHERE k = $1', ['d']);
  });

  test("a connection's exchange sent in two writes is not cut by another connection's query", async () => {
    const a = await rawConnection(socketDir);
    try {
      a.socket.write(parse('SELECT 1 AS from_a'));
      await sleep(100);
      let settled = false;
      const b = db.pool.query('SELECT $1::text AS from_b', ['b']);
      void b.then(() => (settled = true));
      await sleep(300);
      expect(settled).toBe(false);
      a.socket.write(bindExecuteSync());
      expect((await b).rows).toEqual([{ from_b: 'b' }]);
      // A's Bind met A's own statement (no parameters), ran it, and nothing failed.
      await until(() => a.answer().endsWith('Z\0\0\0\x05I'), 5_000, "A's answer");
      expect(a.answer()).toContain('SELECT 1\0');
      expect(a.answer()).not.toContain('bind message supplies');
    } finally {
      a.socket.destroy();
    }
  });

  test('a connection that leaves in the middle of an exchange does not hold or spoil the session', async () => {
    // A failed Parse makes the backend skip everything until Sync; a good one leaves a statement
    // half bound. Neither may reach the next connection.
    await leaveMidExchange(socketDir, [parse('SELEC broken')]);
    await expect(db.pool.query('SELECT $1::int AS n', [7])).resolves.toMatchObject({ rows: [{ n: 7 }] });
    await leaveMidExchange(socketDir, [parse('SELECT 1 AS stale')]);
    await expect(db.pool.query('SELECT $1::int AS n', [8])).resolves.toMatchObject({ rows: [{ n: 8 }] });
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
});

describe('the socket server itself', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-pglite-server-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a database thread that dies reads as a lost connection, not as a refused query', async () => {
    const server = await PgliteServer.start(path.join(dir, 'pgdata'), path.join(dir, 'socket'));
    const pool = new Pool({
      host: server.socketDir,
      port: SOCKET_PORT,
      user: 'postgres',
      database: 'postgres',
    });
    pool.on('error', () => undefined);
    try {
      await pool.query('SELECT 1');
      await server.kill();
      const err = await pool.query('SELECT 1').then(
        () => null,
        (e: unknown) => e,
      );
      // Node's own errors are not instances of the test sandbox's Error: checked by shape.
      expect(err).toMatchObject({ message: expect.any(String) });
      expect(isConnectionError(err)).toBe(true);
    } finally {
      await pool.end().catch(() => undefined);
      await server.stop();
    }
  });

  test('a link where the socket folder belongs is refused, not followed', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-pglite-elsewhere-'));
    try {
      fs.chmodSync(elsewhere, 0o755);
      fs.symlinkSync(elsewhere, path.join(dir, 'socket'));
      await expect(PgliteServer.start(path.join(dir, 'pgdata'), path.join(dir, 'socket'))).rejects.toThrow(
        /not a folder owned by this user/,
      );
      expect(fs.readdirSync(elsewhere)).toEqual([]);
      expect(fs.statSync(elsewhere).mode & 0o777).toBe(0o755);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
