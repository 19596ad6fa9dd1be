/**
 * PGlite on a thread of its own. PGlite is Postgres compiled to WebAssembly: every statement runs
 * synchronously on the thread that holds it. On the worker's main thread that stalls everything
 * else the worker does (activities, workflow tasks, heartbeats) for as long as a query takes, and a
 * lesson lookup over a few thousand stored failures takes around 100 ms. Here the database lives on
 * a worker thread and `pg` talks to it through a connection object that ships the wire protocol's
 * bytes there and parses the answers here, so `pg` and failure-repository.ts see the same Postgres
 * as before.
 */
import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { serialize } from 'pg-protocol';
import { Parser } from 'pg-protocol/dist/parser';

/**
 * Plain JavaScript, evaluated by the thread: it loads PGlite with Node's own require (not through
 * a test runner's module system) from paths resolved here.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
const { pg_trgm } = require(workerData.trgm);
let db = null;
// One message at a time, in arrival order: PGlite is one session.
let queue = Promise.resolve();
parentPort.on('message', (msg) => {
  queue = queue.then(() => handle(msg));
});
async function handle(msg) {
  try {
    if (msg.type === 'open') {
      // pg_trgm ships as a separate bundle that has to be handed to PGlite at start.
      db = await PGlite.create(msg.dataDir, { extensions: { pg_trgm } });
      parentPort.postMessage({ id: msg.id, ok: true });
    } else if (msg.type === 'exec') {
      const data = await db.execProtocolRaw(msg.data);
      // Copied, not transferred: the answer may be a view into PGlite's own memory.
      parentPort.postMessage({ id: msg.id, ok: true, data });
    } else if (msg.type === 'close') {
      if (db) await db.close();
      db = null;
      parentPort.postMessage({ id: msg.id, ok: true });
    }
  } catch (err) {
    parentPort.postMessage({ id: msg.id, ok: false, error: String((err && err.stack) || err) });
  }
}
`;

type Reply = { id: number; ok: true; data?: Uint8Array } | { id: number; ok: false; error: string };

/** The thread that holds one PGlite instance, and the calls into it. */
export class PgliteThread {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (data: Uint8Array | undefined) => void; reject: (err: Error) => void }
  >();
  private gone: Error | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: Reply) => {
      const call = this.pending.get(reply.id);
      if (!call) return;
      this.pending.delete(reply.id);
      if (reply.ok) call.resolve(reply.data);
      else call.reject(new Error(`embedded database: ${reply.error}`));
    });
    const fail = (err: Error): void => {
      // A connection-style code, so that callers treat it as the database going away.
      this.gone ??= Object.assign(err, { code: 'ECONNRESET' });
      for (const call of this.pending.values()) call.reject(this.gone);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the embedded database's thread exited (code ${code})`)));
    // The thread must not keep the process alive on its own; open calls hold it while they run.
    worker.unref();
  }

  /** Starts the thread and opens (creating if needed) the cluster in `dataDir` there. */
  static async open(dataDir: string): Promise<PgliteThread> {
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: {
        pglite: require.resolve('@electric-sql/pglite'),
        trgm: require.resolve('@electric-sql/pglite/contrib/pg_trgm'),
      },
    });
    const thread = new PgliteThread(worker);
    try {
      await thread.call({ type: 'open', dataDir });
    } catch (err) {
      await worker.terminate();
      throw err;
    }
    return thread;
  }

  private call(
    message: { type: 'open'; dataDir: string } | { type: 'exec'; data: Uint8Array } | { type: 'close' },
  ) {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    this.worker.ref();
    return new Promise<Uint8Array | undefined>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    });
  }

  /** Runs wire-protocol messages and returns the backend's answer, also in wire format. */
  async exec(data: Uint8Array): Promise<Uint8Array> {
    return (await this.call({ type: 'exec', data })) ?? new Uint8Array(0);
  }

  /** Closes the database (its files are then consistent on disk) and ends the thread. */
  async close(): Promise<void> {
    try {
      if (!this.gone) await this.call({ type: 'close' });
    } finally {
      await this.worker.terminate();
    }
  }
}

/**
 * What `pg.Client` needs of a connection, answered by the database thread. pg drives a connection
 * through these methods and events; the server side of the handshake (startup, SSL, passwords) does
 * not exist for an embedded database, so those are no-ops, and everything else is one message
 * serialized here, run there, and its answer parsed back into the events pg listens for.
 *
 * One per pg client, like a socket: a client the pool throws away after an error must not hand
 * its late 'end' (or anything else) to the client that replaces it on the same session.
 */
export class PgliteThreadConnection extends EventEmitter {
  /** Read by pg's Client.end(), which skips connection.end() without it. */
  _connecting = false;
  /** pg's Client.end() destroys the stream when a query is still active. */
  readonly stream = { destroy: (): void => this.end() };
  parsedStatements = {};
  submittedNamedStatements = {};
  private queue: Promise<void> = Promise.resolve();
  private emitMessage = false;
  /** From the last ReadyForQuery: 'I' idle, 'T' in a transaction, 'E' in a failed one. */
  private transactionStatus = 'I';

  constructor(private readonly thread: PgliteThread) {
    super();
    this.on('newListener', (eventName) => {
      if (eventName === 'message') this.emitMessage = true;
    });
  }

  private send(message: Buffer): void {
    // In order, one at a time: PGlite is one session.
    this.queue = this.queue
      .then(() => this.thread.exec(message))
      .then((answer) => {
        new Parser().parse(Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength), (msg) => {
          if (msg.name === 'readyForQuery')
            this.transactionStatus = (msg as { status?: string }).status ?? 'I';
          if (this.emitMessage) this.emit('message', msg);
          // pg listens for an ErrorResponse as 'errorMessage'.
          this.emit(msg.name === 'error' ? 'errorMessage' : msg.name, msg);
        });
      })
      .catch((err: unknown) => {
        this.emit('error', err);
      });
  }

  connect(): void {
    this._connecting = true;
    process.nextTick(() => this.emit('readyForQuery'));
  }

  requestSsl(): void {}
  startup(): void {}
  cancel(): void {}
  password(): void {}
  ref(): void {}
  unref(): void {}

  query(text: string): void {
    this.send(serialize.query(text));
  }
  parse(query: Parameters<typeof serialize.parse>[0]): void {
    this.send(serialize.parse(query));
  }
  bind(config: Parameters<typeof serialize.bind>[0]): void {
    this.send(serialize.bind(config));
  }
  execute(config: Parameters<typeof serialize.execute>[0]): void {
    this.send(serialize.execute(config));
  }
  describe(message: Parameters<typeof serialize.describe>[0]): void {
    this.send(serialize.describe(message));
  }
  close(message: Parameters<typeof serialize.close>[0]): void {
    this.send(serialize.close(message));
  }
  flush(): void {
    this.send(serialize.flush());
  }
  sync(): void {
    this.send(serialize.sync());
  }
  sendCopyFromChunk(chunk: Buffer): void {
    this.send(serialize.copyData(chunk));
  }
  endCopyFrom(): void {
    this.send(serialize.copyDone());
  }
  sendCopyFail(message: string): void {
    this.send(serialize.copyFail(message));
  }

  end(): void {
    // Like a socket closing: pg waits for 'end', after whatever is still on its way. A server
    // rolls back what a closed connection left open; the shared session must do the same, or the
    // next client would find itself inside (or stuck in) someone else's transaction.
    this.queue = this.queue
      .then(async () => {
        if (this.transactionStatus !== 'I') await this.thread.exec(serialize.query('ROLLBACK'));
        this.transactionStatus = 'I';
      })
      .catch(() => undefined)
      .then(() => {
        this.emit('end');
      });
  }
}
