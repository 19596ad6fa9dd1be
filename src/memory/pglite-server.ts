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
import type { ClusterTemplate } from './cluster-template';

/** The thread's code: a file of its own beside this module (copied into dist/ by the build). */
const THREAD_FILE = path.join(__dirname, 'pglite-thread.cjs');

/** What opening a cluster did with the template it was given or asked for. */
interface Opened {
  /** A dump of the cluster just initialised, when one was asked for. */
  template?: Uint8Array;
  /** The template given did not load; the cluster was initialised without it. */
  templateRejected?: boolean;
}

type OpenMessage = {
  type: 'open';
  dataDir: string;
  socketPath: string;
  template: Uint8Array | null;
  makeTemplate: boolean;
};

type Reply = ({ id: number; ok: true } & Opened) | { id: number; ok: false; error: string };

/** The default port, which pg needs to name the socket file (`.s.PGSQL.<port>`) in a folder. */
export const SOCKET_PORT = 5432;

/** Longest unix socket path Linux takes (sun_path is 108 bytes, with the closing NUL). */
const MAX_SOCKET_PATH = 107;

/** A running PGlite socket server: where pg connects, and how to stop it. */
export class PgliteServer {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (opened: Opened) => void; reject: (err: Error) => void }
  >();
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
      if (reply.ok) call.resolve(reply);
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
   * temporary folder when that path is too long for a unix socket. A new cluster starts from
   * `template` when there is one, and leaves one there when there is not.
   */
  static async start(dataDir: string, socketDir: string, template?: ClusterTemplate): Promise<PgliteServer> {
    let dir = socketDir;
    let temporary = false;
    if (path.join(dir, `.s.PGSQL.${SOCKET_PORT}`).length > MAX_SOCKET_PATH) {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-pglite-'));
      temporary = true;
    } else {
      preparePrivateDir(dir);
    }
    const worker = new Worker(THREAD_FILE, {
      workerData: {
        pglite: require.resolve('@electric-sql/pglite'),
        trgm: require.resolve('@electric-sql/pglite/contrib/pg_trgm'),
        socket: require.resolve('@electric-sql/pglite-socket'),
      },
    });
    const server = new PgliteServer(worker, dir, temporary);
    const fresh = template !== undefined && !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
    const kept = fresh ? template.read() : null;
    try {
      const opened = await server.call({
        type: 'open',
        dataDir,
        socketPath: path.join(dir, `.s.PGSQL.${SOCKET_PORT}`),
        template: kept,
        makeTemplate: fresh && kept === null,
      });
      if (opened.templateRejected) template?.remove();
      if (opened.template) template?.write(opened.template);
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  private call(message: OpenMessage | { type: 'close' }): Promise<Opened> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    this.worker.ref();
    return new Promise<Opened>((resolve, reject) => {
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
