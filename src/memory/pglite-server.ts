/**
 * PGlite served over a unix socket from a thread of its own, so that the ordinary `pg` Pool
 * reaches it as it reaches any Postgres server.
 *
 * Why a thread: PGlite is Postgres compiled to WebAssembly and every statement runs synchronously
 * on the thread that holds it. On the worker's main thread that would stall activities, workflow
 * tasks and heartbeats for as long as a query takes (a lesson lookup over a few thousand stored
 * failures takes around 100 ms).
 *
 * Why a unix socket in a private folder: a 127.0.0.1 port is open to every local user and every
 * process the agent runs; a socket inside a 0700 folder is reachable only by this user.
 *
 * The wire protocol is framed by @electric-sql/pglite-socket's PGLiteSocketHandler. Its own
 * server is not used: its queue hands the one PGlite session to whichever connection has the next
 * message, so an extended-protocol exchange (Parse, Bind, Execute, Sync) from one connection can
 * be cut by another's Parse, which replaces the unnamed statement the first then binds
 * (electric-sql/pglite#1046, still in 0.2.17), and one failed call stops its queue for good. The
 * session queue below gives the session to one connection from its first message until PGlite
 * answers ReadyForQuery outside a transaction block, and keeps going after a failure.
 *
 * Session state other than the exchange itself (named prepared statements, SET, advisory locks,
 * temporary tables) is shared by every connection, as they all run on the same PGlite session;
 * failure-repository.ts and migrations.ts use none of it across connections.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Plain JavaScript, evaluated by the thread: it loads PGlite and pglite-socket with Node's own
 * require (not through a test runner's module system) from paths resolved here.
 */
const THREAD_SOURCE = `
const net = require('node:net');
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
const { pg_trgm } = require(workerData.trgm);
const { PGLiteSocketHandler } = require(workerData.socket);

const READY_FOR_QUERY = 0x5a; // 'Z'
const IDLE = 0x49; // 'I': ReadyForQuery outside a transaction block
const SYNC = Uint8Array.of(0x53, 0, 0, 0, 4);
const ROLLBACK = Uint8Array.of(0x51, 0, 0, 0, 13, ...Buffer.from('ROLLBACK\\0', 'latin1'));

/** Follows the backend's message framing across chunks, to see where an exchange ends. */
class AnswerFramer {
  constructor() { this.head = []; this.remaining = 0; this.type = 0; this.lastByte = 0; }
  feed(chunk) {
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - i);
        this.lastByte = chunk[i + take - 1];
        this.remaining -= take;
        i += take;
        continue;
      }
      this.head.push(chunk[i++]);
      if (this.head.length === 5) {
        this.type = this.head[0];
        this.remaining = ((this.head[1] << 24) | (this.head[2] << 16) | (this.head[3] << 8) | this.head[4]) - 4;
        this.head = [];
      }
    }
  }
  /** True when the answer so far ends with ReadyForQuery 'I'. */
  endsIdle() {
    return this.head.length === 0 && this.remaining === 0 && this.type === READY_FOR_QUERY && this.lastByte === IDLE;
  }
}

/** What PGLiteSocketHandler expects of its queue, with the session held for a whole exchange. */
class SessionQueue {
  constructor(db) { this.db = db; this.waiting = []; this.owner = null; this.running = false; }
  enqueue(handlerId, message, onData) {
    return this.push(handlerId, (framer) =>
      this.db.execProtocolRawStream(message, { onRawData: (data) => { framer.feed(data); onData(data); } }));
  }
  push(handlerId, run) {
    return new Promise((resolve, reject) => {
      this.waiting.push({ handlerId, run, resolve, reject });
      void this.pump();
    });
  }
  async pump() {
    if (this.running) return;
    this.running = true;
    try {
      while (this.waiting.length > 0) {
        // Mid-exchange, only the owner's next message may run; the others wait for it.
        const i = this.owner === null ? 0 : this.waiting.findIndex((w) => w.handlerId === this.owner);
        if (i < 0) break;
        const [job] = this.waiting.splice(i, 1);
        this.owner = job.handlerId;
        const framer = new AnswerFramer();
        try {
          await this.db.runExclusive(() => job.run(framer));
          if (framer.endsIdle()) this.owner = null;
          job.resolve(0);
        } catch (err) {
          this.owner = null;
          job.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }
  clearQueueForHandler(handlerId) {
    const mine = this.waiting.filter((w) => w.handlerId === handlerId);
    this.waiting = this.waiting.filter((w) => w.handlerId !== handlerId);
    for (const w of mine) w.reject(new Error('connection closed'));
  }
  /** A connection that leaves mid-exchange or mid-transaction: end both for the next one. */
  async clearTransactionIfNeeded(handlerId) {
    if (this.owner !== handlerId) return;
    await this.push(handlerId, async () => {
      // Sync ends an unfinished exchange (and one that failed, whose later messages the backend
      // skips until Sync); ROLLBACK ends a transaction block. The answers go nowhere.
      // Raw messages, not db.exec: this runs inside runExclusive, which db.exec would wait for.
      await this.db.execProtocolRawStream(SYNC, { onRawData: () => undefined });
      if (this.db.isInTransaction()) await this.db.execProtocolRawStream(ROLLBACK, { onRawData: () => undefined });
    }).catch(() => undefined);
    if (this.owner === handlerId) this.owner = null;
    void this.pump();
  }
}

let db = null;
let server = null;
const sockets = new Set();

async function open(msg) {
  // pg_trgm ships as a separate bundle that has to be handed to PGlite at start.
  db = await PGlite.create(msg.dataDir, { extensions: { pg_trgm } });
  const queue = new SessionQueue(db);
  // The folder's lock says nobody else serves this database: a socket left here is stale.
  fs.rmSync(msg.socketPath, { force: true });
  server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    new PGLiteSocketHandler({ queryQueue: queue, closeOnDetach: true }).attach(socket).catch(() => socket.destroy());
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(msg.socketPath, () => { server.off('error', reject); resolve(); });
  });
}

async function close() {
  if (server) {
    const closed = new Promise((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
    server = null;
  }
  if (db) await db.close();
  db = null;
}

parentPort.on('message', (msg) => {
  const work = msg.type === 'open' ? open(msg) : close();
  work.then(
    () => parentPort.postMessage({ id: msg.id, ok: true }),
    (err) => parentPort.postMessage({ id: msg.id, ok: false, error: String((err && err.stack) || err) }),
  );
});
`;

type Reply = { id: number; ok: true } | { id: number; ok: false; error: string };

/** The default port, which pg needs to name the socket file (`.s.PGSQL.<port>`) in a folder. */
export const SOCKET_PORT = 5432;

/** Longest unix socket path Linux takes (sun_path is 108 bytes, with the closing NUL). */
const MAX_SOCKET_PATH = 107;

/** A running PGlite socket server: where pg connects, and how to stop it. */
export class PgliteServer {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private gone: Error | null = null;

  private constructor(
    private readonly worker: Worker,
    /** The folder holding the socket: pg's `host`. */
    readonly socketDir: string,
    private readonly removeSocketDir: boolean,
  ) {
    worker.on('message', (reply: Reply) => {
      const call = this.pending.get(reply.id);
      if (!call) return;
      this.pending.delete(reply.id);
      if (reply.ok) call.resolve();
      else call.reject(new Error(`embedded database: ${reply.error}`));
    });
    const fail = (err: Error): void => {
      this.gone ??= err;
      for (const call of this.pending.values()) call.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the embedded database's thread exited (code ${code})`)));
    // The thread must not keep the process alive on its own: pg's open connections do that while
    // they are in use, and calls to the thread while they run.
    worker.unref();
  }

  /**
   * Opens (creating if needed) the cluster in `dataDir` on a thread and serves it on a socket in
   * `socketDir` (made private to this user), or in a fresh private folder under the system's
   * temporary folder when that path is too long for a unix socket.
   */
  static async start(dataDir: string, socketDir: string): Promise<PgliteServer> {
    let dir = socketDir;
    let temporary = false;
    if (path.join(dir, `.s.PGSQL.${SOCKET_PORT}`).length > MAX_SOCKET_PATH) {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-pglite-'));
      temporary = true;
    } else {
      preparePrivateDir(dir);
    }
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: {
        pglite: require.resolve('@electric-sql/pglite'),
        trgm: require.resolve('@electric-sql/pglite/contrib/pg_trgm'),
        socket: require.resolve('@electric-sql/pglite-socket'),
      },
    });
    const server = new PgliteServer(worker, dir, temporary);
    try {
      await server.call({ type: 'open', dataDir, socketPath: path.join(dir, `.s.PGSQL.${SOCKET_PORT}`) });
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  private call(message: { type: 'open'; dataDir: string; socketPath: string } | { type: 'close' }) {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    this.worker.ref();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    });
  }

  /**
   * Closes every connection and the database (its files are then consistent on disk), and ends
   * the thread.
   */
  async stop(): Promise<void> {
    try {
      if (!this.gone) await this.call({ type: 'close' });
    } finally {
      await this.worker.terminate();
      fs.rmSync(path.join(this.socketDir, `.s.PGSQL.${SOCKET_PORT}`), { force: true });
      if (this.removeSocketDir) fs.rmSync(this.socketDir, { recursive: true, force: true });
    }
  }

  /** Ends the thread at once, as a crash would (for tests of what pg sees then). */
  async kill(): Promise<void> {
    await this.worker.terminate();
  }
}

/**
 * Makes `dir` a folder only this user can enter. A link or someone else's folder there is
 * refused rather than followed: the socket must not end up where another user can reach it.
 */
function preparePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = fs.lstatSync(dir);
  if (!stat.isDirectory() || (typeof process.getuid === 'function' && stat.uid !== process.getuid()))
    throw new Error(`${dir} is not a folder owned by this user; refusing to put the database socket there`);
  fs.chmodSync(dir, 0o700);
}
