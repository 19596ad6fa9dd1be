/**
 * The embedded database's thread (see pglite-server.ts): PGlite served over a unix socket, the
 * wire protocol framed by pglite-socket's handler, one session handed to one connection for a
 * whole exchange. Plain CommonJS, loaded with Node's own require (not through a test runner's
 * module system) from the package paths the parent resolves and passes in workerData.
 */
'use strict';
const { Blob, Buffer } = require('node:buffer');
const net = require('node:net');
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
const { pg_trgm } = require(workerData.trgm);
const { PGLiteSocketHandler } = require(workerData.socket);

const READY_FOR_QUERY = 0x5a; // 'Z'
const IDLE = 0x49; // 'I': ReadyForQuery outside a transaction block
const SYNC = Uint8Array.of(0x53, 0, 0, 0, 4);
const ROLLBACK = Uint8Array.of(0x51, 0, 0, 0, 13, ...Buffer.from('ROLLBACK\0', 'latin1'));

/** Follows the backend's message framing across chunks, to see where an exchange ends. */
class AnswerFramer {
  constructor() {
    this.head = [];
    this.remaining = 0;
    this.type = 0;
    this.lastByte = 0;
  }
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
        this.remaining =
          ((this.head[1] << 24) | (this.head[2] << 16) | (this.head[3] << 8) | this.head[4]) - 4;
        this.head = [];
      }
    }
  }
  /** True when the answer so far ends with ReadyForQuery 'I'. */
  endsIdle() {
    return (
      this.head.length === 0 &&
      this.remaining === 0 &&
      this.type === READY_FOR_QUERY &&
      this.lastByte === IDLE
    );
  }
}

/** What PGLiteSocketHandler expects of its queue, with the session held for a whole exchange. */
class SessionQueue {
  constructor(db) {
    this.db = db;
    this.waiting = [];
    this.owner = null;
    this.running = false;
  }
  enqueue(handlerId, message, onData) {
    return this.push(handlerId, (framer) =>
      this.db.execProtocolRawStream(message, {
        onRawData: (data) => {
          framer.feed(data);
          onData(data);
        },
      }),
    );
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
      if (this.db.isInTransaction())
        await this.db.execProtocolRawStream(ROLLBACK, { onRawData: () => undefined });
    }).catch(() => undefined);
    if (this.owner === handlerId) this.owner = null;
    void this.pump();
  }
}

let db = null;
let server = null;
const sockets = new Set();

/**
 * Opens the cluster in msg.dataDir: a new one from msg.template (a dump of a fresh cluster) when
 * given, and answers with a dump of the new cluster when msg.makeTemplate asks for one.
 */
async function open(msg) {
  // pg_trgm ships as a separate bundle that has to be handed to PGlite at start.
  const options = { extensions: { pg_trgm } };
  const opened = {};
  if (msg.template) {
    try {
      db = await PGlite.create(msg.dataDir, { ...options, loadDataDir: new Blob([msg.template]) });
    } catch {
      // The folder was new: start it again, as if no template had been kept.
      fs.rmSync(msg.dataDir, { recursive: true, force: true });
      fs.mkdirSync(msg.dataDir, { recursive: true });
      db = await PGlite.create(msg.dataDir, options);
      opened.templateRejected = true;
    }
  } else {
    db = await PGlite.create(msg.dataDir, options);
    if (msg.makeTemplate) {
      // Taken before any schema is made, so it holds nothing but the initialised cluster.
      opened.template = new Uint8Array(await (await db.dumpDataDir('gzip')).arrayBuffer());
    }
  }
  const queue = new SessionQueue(db);
  // The folder's lock says nobody else serves this database: a socket left here is stale.
  fs.rmSync(msg.socketPath, { force: true });
  server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    new PGLiteSocketHandler({ queryQueue: queue, closeOnDetach: true })
      .attach(socket)
      .catch(() => socket.destroy());
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(msg.socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return opened;
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
    (opened) => parentPort.postMessage({ id: msg.id, ok: true, ...opened }),
    (err) => parentPort.postMessage({ id: msg.id, ok: false, error: String((err && err.stack) || err) }),
  );
});
