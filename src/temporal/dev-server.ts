/**
 * Runs `temporal server start-dev` as a child process: a real Temporal server (SQLite persistence,
 * Web UI) rather than the SDK's in-memory test server, so agent runs survive a restart — all state
 * lives in `dbFile`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import { searchAttributeCliArgs } from './search-attributes';

export interface DevServerOptions {
  cliPath: string;
  /** SQLite file holding all server state; created (with schema) if missing. */
  dbFile: string;
  port?: number;
  uiPort?: number;
  /** Disable the Web UI (saves memory, e.g. in CI). */
  headless?: boolean;
  ip?: string;
  namespace?: string;
  /** Server output goes here (appended); otherwise only its tail is kept for error messages. */
  logFile?: string;
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'never';
  extraArgs?: string[];
  /** How long to wait for the frontend to answer. */
  readyTimeoutMs?: number;
  /**
   * Leave the server running after this process exits (`aca demo` does, so the Web UI stays up). By default the
   * child is killed when we exit, so crashed test runs do not leave servers squatting on ports.
   */
  detached?: boolean;
}

export interface DevServerHandle {
  /** host:port of the gRPC frontend. */
  address: string;
  uiUrl: string | undefined;
  namespace: string;
  dbFile: string;
  pid: number;
  /** Milliseconds from spawn until the frontend and namespace answered. */
  startupMs: number;
  /** SIGTERM, then SIGKILL if still alive after `graceMs` (default 10 s). */
  stop(graceMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): void;
  /** Resolves with the exit code (or signal) when the process is gone. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/** The history queues whose reads per second the dev server caps at 20 unless told otherwise. */
export const TASK_QUEUE_READ_RATES = [
  'history.transferProcessorMaxPollRPS',
  'history.timerProcessorMaxPollRPS',
  'history.visibilityProcessorMaxPollRPS',
] as const;

export async function startDevServer(options: DevServerOptions): Promise<DevServerHandle> {
  const {
    cliPath,
    dbFile,
    port = 7233,
    uiPort = 8233,
    headless = false,
    ip = '127.0.0.1',
    namespace = 'default',
    logLevel = 'warn',
    readyTimeoutMs = 60_000,
  } = options;

  const address = `${ip}:${port}`;
  // Otherwise the readiness probe below could mistake a server already on that port for ours.
  if (await isPortOpen(address, 500))
    throw new PortInUseError(`cannot start temporal dev server: ${address} is in use`, address);
  fs.mkdirSync(path.dirname(path.resolve(dbFile)), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    dbFile,
    '--ip',
    ip,
    '--port',
    String(port),
    '--log-level',
    logLevel,
    // v1.5.1 already defaults this to true; set it explicitly in case TEMPORAL_CLI points at a build
    // that does not, because the agent upserts attributes right after registering them.
    '--dynamic-config-value',
    'system.forceSearchAttributesCacheRefreshOnRead=true',
    // The worker polls the same task queue it schedules on, so the server may hand it the next
    // activity in the reply to the workflow task that scheduled it: one round trip fewer per step.
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
    // The dev server has one history shard, and each of its task queues reads its tasks at most 20
    // times a second by default. Every workflow task after an activity passes through the transfer
    // queue, so past a short burst each step of every run on the server waited for that limit
    // (~50 ms per activity against ~15 ms without it). A cluster spreads the same limit over
    // hundreds of shards.
    ...TASK_QUEUE_READ_RATES.flatMap((setting) => ['--dynamic-config-value', `${setting}=1000`]),
    // Write-ahead log with syncs at checkpoints: a commit survives the server process being
    // killed (only an OS crash or power loss can take back the last ones), and each event no
    // longer waits for a disk sync, which was most of the time a run spent on the server.
    '--sqlite-pragma',
    'journal_mode=wal',
    '--sqlite-pragma',
    'synchronous=normal',
    // Registered in the SQLite schema when the namespace is first created. On an existing db file
    // this is a no-op, which is why callers also run registerSearchAttributes().
    ...searchAttributeCliArgs(),
    ...(headless ? ['--headless'] : ['--ui-port', String(uiPort)]),
    // "default" is always created; naming it again is redundant.
    ...(namespace !== 'default' ? ['--namespace', namespace] : []),
    ...(options.extraArgs ?? []),
  ];

  const started = Date.now();
  const logFd = options.logFile ? fs.openSync(options.logFile, 'a') : undefined;
  // Where this start's output begins in an appended-to log file, to tell why it failed.
  const logStart = logFd === undefined ? 0 : fs.fstatSync(logFd).size;
  // A detached server must not hold pipes to us: it would die of SIGPIPE once we are gone.
  const out = logFd ?? (options.detached ? 'ignore' : 'pipe');
  const child: ChildProcess = spawn(cliPath, args, {
    stdio: ['ignore', out, out],
    detached: options.detached ?? false,
  });
  if (logFd !== undefined) fs.closeSync(logFd);

  const tail: string[] = [];
  const keepTail = (chunk: Buffer) => {
    tail.push(...chunk.toString().split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - 30));
  };
  child.stdout?.on('data', keepTail);
  child.stderr?.on('data', keepTail);

  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal));
    child.on('error', (err) => {
      tail.push(String(err));
      resolve(null);
    });
  });
  let alive = true;
  void exited.then(() => {
    alive = false;
    process.off('exit', killOnExit);
  });
  const killOnExit = () => child.kill('SIGKILL');
  if (options.detached) child.unref();
  else process.on('exit', killOnExit);

  const kill = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (alive) child.kill(signal);
  };
  const stop = async (graceMs = 10_000) => {
    if (!alive) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };

  const output = () => (options.logFile ? readFrom(options.logFile, logStart) : tail.join('\n'));
  const describeOutput = () => (options.logFile ? `see ${options.logFile}` : tail.join('\n'));
  // A port taken between choosing and binding (the frontend's, the UI's or one the server picks
  // for its internal services) is worth another try on other ports; see startDevServerOnFreePorts.
  const failure = (message: string) =>
    ADDRESS_IN_USE.test(output())
      ? new PortInUseError(`${message}: a port is in use:\n${describeOutput()}`, address)
      : new Error(`${message}:\n${describeOutput()}`);
  try {
    await waitUntilReady(address, namespace, started + readyTimeoutMs, () => alive);
  } catch (err) {
    const why = alive ? String(err) : 'exited early';
    await stop(2000);
    throw failure(`temporal dev server on ${address} did not start (${why})`);
  }
  if (!alive) throw failure('temporal dev server exited right after start');

  return {
    address,
    uiUrl: headless ? undefined : `http://${ip === '127.0.0.1' ? 'localhost' : ip}:${uiPort}`,
    namespace,
    dbFile,
    pid: child.pid!,
    startupMs: Date.now() - started,
    stop,
    kill,
    exited,
  };
}

/** Thrown when a port the server should listen on is taken; nothing was left running. */
export class PortInUseError extends Error {
  constructor(
    message: string,
    readonly address: string,
  ) {
    super(message);
    this.name = 'PortInUseError';
  }
}

const ADDRESS_IN_USE = /address already in use/i;

function readFrom(file: string, offset: number): string {
  try {
    return fs.readFileSync(file).subarray(offset).toString();
  } catch {
    return '';
  }
}

/**
 * startDevServer on ports chosen here, chosen again when one was taken between choosing and
 * binding (another process on the machine may take a port getFreePort found free): up to
 * `attempts` tries. `choosePort` is for tests that force the race.
 */
export async function startDevServerOnFreePorts(
  options: Omit<DevServerOptions, 'port' | 'uiPort'>,
  {
    attempts = 5,
    choosePort = getFreePort,
  }: { attempts?: number; choosePort?: (host: string) => Promise<number> } = {},
): Promise<DevServerHandle> {
  const ip = options.ip ?? '127.0.0.1';
  for (let attempt = 1; ; attempt++) {
    const port = await choosePort(ip);
    const uiPort = options.headless ? undefined : await choosePort(ip);
    try {
      return await startDevServer({ ...options, port, ...(uiPort === undefined ? {} : { uiPort }) });
    } catch (err) {
      if (!(err instanceof PortInUseError) || attempt >= attempts) throw err;
    }
  }
}

/**
 * Ready means the namespace can be described, not merely that the port is open: the frontend
 * starts listening before the namespace registry has loaded.
 */
async function waitUntilReady(address: string, namespace: string, deadline: number, alive: () => boolean) {
  let lastError: unknown;
  while (Date.now() < deadline && alive()) {
    if (await isPortOpen(address, 500)) {
      let connection: Connection | undefined;
      try {
        connection = await Connection.connect({ address, connectTimeout: 2000 });
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } catch (err) {
        lastError = err;
      } finally {
        await connection?.close().catch(() => undefined);
      }
    }
    await sleep(200);
  }
  throw lastError ?? new Error('timed out');
}

/** True if a Temporal frontend answers at `address` within `timeoutMs`. */
export async function isTemporalReachable(address: string, timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  // A TCP probe first: a closed port answers "refused" at once, whereas gRPC would keep retrying.
  if (!(await isPortOpen(address, timeoutMs))) return false;
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: Math.max(100, deadline - Date.now()) });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

function isPortOpen(address: string, timeoutMs: number): Promise<boolean> {
  const idx = address.lastIndexOf(':');
  const host = address.slice(0, idx).replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(address.slice(idx + 1));
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * A port that was free a moment ago. Racy by nature (someone may grab it before the server binds):
 * startDevServer fails fast with a PortInUseError if it loses, and startDevServerOnFreePorts
 * chooses again.
 */
export function getFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
