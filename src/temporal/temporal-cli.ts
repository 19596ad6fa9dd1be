/**
 * Locates the `temporal` CLI binary (whose `server start-dev` is our Temporal server) and, when
 * it is missing, builds a pinned version with Go.
 *
 * Why build instead of download: the machines aca runs on often reach only package registries
 * (npm, the Go module proxy), not GitHub releases or temporal.download, so `go install` is the
 * one route that works everywhere. The SDK's own download is kept only as a last resort.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { tryPidLock } from '../shared/pid-lock';
import { setTimeout as sleep } from 'node:timers/promises';
import { findExecutable, isExecutable } from '../shared/executables';
import { programLookup, userEnvironment, type ProgramLookup } from '../config';

/**
 * Newest CLI tag whose go.mod has no `replace` directive; later tags cannot be `go install`ed
 * (Go refuses `replace` in a module installed by path@version). Ships Temporal Server 1.29.1.
 */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

export type ProgressFn = (message: string) => void;

export interface EnsureTemporalCliOptions {
  onProgress?: ProgressFn;
  /** How often to report elapsed time while building (ms). */
  progressIntervalMs?: number;
  /**
   * Allow the `@temporalio/testing` download when Go is missing and the internet is reachable.
   * Tests pass `false`: they must never depend on that download.
   */
  allowSdkDownload?: boolean;
}

/** Outside the repository so `git clean` or a fresh checkout does not throw away a minutes-long build. */
export function temporalCliCacheDir(lookup: ProgramLookup = programLookup()): string {
  return path.join(lookup.cacheHome, 'aca', 'bin');
}

function exeName(base: string): string {
  return process.platform === 'win32' ? `${base}.exe` : base;
}

/** `TEMPORAL_CLI`, then `temporal` on PATH, then the project's build cache. */
export function findTemporalCli(lookup: ProgramLookup = programLookup()): string | undefined {
  if (lookup.temporalCli && isExecutable(lookup.temporalCli)) return lookup.temporalCli;
  const onPath = findExecutable('temporal', lookup.searchPath);
  if (onPath) return onPath;
  const cached = path.join(temporalCliCacheDir(lookup), exeName('temporal'));
  return isExecutable(cached) ? cached : undefined;
}

export async function ensureTemporalCli(options: EnsureTemporalCliOptions = {}): Promise<string> {
  const { onProgress = () => undefined, allowSdkDownload = true } = options;
  // An explicit setting that is wrong should fail loudly, not silently fall back to something else.
  const lookup = programLookup();
  const explicit = lookup.temporalCli;
  if (explicit && !isExecutable(explicit)) {
    throw new Error(`TEMPORAL_CLI=${explicit} is not an executable file`);
  }
  const found = findTemporalCli(lookup);
  if (found) return found;

  const cacheDir = temporalCliCacheDir(lookup);
  const go =
    findExecutable('go', lookup.searchPath) ??
    (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : undefined);
  if (go) {
    await buildWithGo(go, cacheDir, onProgress, options.progressIntervalMs ?? 5000);
    const built = path.join(cacheDir, exeName('temporal'));
    if (!isExecutable(built)) throw new Error(`go install finished but ${built} is missing`);
    return built;
  }

  if (allowSdkDownload && (await hasInternet())) {
    onProgress('Go not found; downloading the Temporal CLI through @temporalio/testing');
    return downloadWithSdk(cacheDir, onProgress);
  }
  throw new Error(
    'Temporal CLI not found. Install Go (https://go.dev/dl) so aca can build ' +
      `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}, put \`temporal\` on PATH, or set TEMPORAL_CLI=/path/to/temporal.`,
  );
}

/**
 * Two callers (say, a CLI run and a test run) may both find the binary missing. A pid lock makes
 * the second one wait for the first build instead of compiling the server twice; a lock left by
 * a killed build is taken over.
 */
async function buildWithGo(go: string, cacheDir: string, onProgress: ProgressFn, intervalMs: number) {
  fs.mkdirSync(cacheDir, { recursive: true });
  const target = path.join(cacheDir, exeName('temporal'));
  const started = Date.now();
  const elapsed = () => `${Math.round((Date.now() - started) / 1000)}s`;
  let lock = await tryPidLock(path.join(cacheDir, '.temporal-build.lock'));
  while (!lock.acquired) {
    onProgress(`waiting for another build of the Temporal CLI (${elapsed()})`);
    await sleep(Math.min(intervalMs, 2000));
    lock = await tryPidLock(path.join(cacheDir, '.temporal-build.lock'));
  }
  try {
    // The build we waited for may have produced it.
    if (isExecutable(target)) return;
    onProgress(`building ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION} with Go (takes a few minutes)`);
    await new Promise<void>((resolve, reject) => {
      const child = spawn(go, ['install', `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`], {
        env: userEnvironment({ GOBIN: cacheDir }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const tail: string[] = [];
      const onData = (chunk: Buffer) => {
        for (const line of chunk.toString().split('\n')) {
          if (!line.trim()) continue;
          tail.push(line);
          if (tail.length > 40) tail.shift();
          onProgress(`${line.trim()} (${elapsed()})`);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      // Compiling prints nothing for minutes; a heartbeat shows the build is alive.
      const timer = setInterval(
        () => onProgress(`still building the Temporal CLI… ${elapsed()}`),
        intervalMs,
      );
      child.on('error', (err) => {
        clearInterval(timer);
        reject(err);
      });
      child.on('close', (code) => {
        clearInterval(timer);
        if (code === 0) {
          onProgress(`built the Temporal CLI in ${elapsed()}`);
          resolve();
        } else reject(new Error(`go install exited with ${code}:\n${tail.join('\n')}`));
      });
    });
  } finally {
    lock.release();
  }
}

/** Cheap probe of the host the SDK downloads from, so offline machines fail fast with advice. */
function hasInternet(timeoutMs = 5000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.request('https://temporal.download/', { method: 'HEAD', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * The SDK exposes no "download only" call, so start (and stop) a throwaway local environment with
 * the download directory pointed at our cache, then adopt the binary it left there.
 */
async function downloadWithSdk(cacheDir: string, onProgress: ProgressFn): Promise<string> {
  const downloadDir = path.join(cacheDir, 'sdk-download');
  fs.mkdirSync(downloadDir, { recursive: true });
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'cached-download', downloadDir } },
  });
  await env.teardown();
  const newest = fs
    .readdirSync(downloadDir)
    .map((name) => path.join(downloadDir, name))
    .filter(isExecutable)
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
  if (!newest) throw new Error(`@temporalio/testing download left no executable in ${downloadDir}`);
  const target = path.join(cacheDir, exeName('temporal'));
  fs.copyFileSync(newest, target);
  fs.chmodSync(target, 0o755);
  onProgress(`downloaded the Temporal CLI to ${target}`);
  return target;
}
