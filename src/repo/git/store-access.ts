/**
 * How aca reaches the git store. Every call goes through git.ts (pinned configuration, explicit
 * git directory) with only the store's own protocol opened, no credential helper or askpass
 * program from any config, no prompt, and a time limit; a store that does not answer, and a disk
 * that fills while writing, each fail as errors of their own (git-store-errors.ts).
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { git, GitError, gitWithStatus, type GitNetworkAccess } from './git';
import { redactStore, type GitStoreLocation } from './git-store-location';
import { GitStoreUnreachableError, isDiskFull, WorkerDiskFullError } from './git-store-errors';

/** Long enough for a large repository's first push; a step's own push is one commit. */
export const DEFAULT_STORE_TIMEOUT_MS = 5 * 60_000;

export interface StoreCallOptions {
  /** Each git call to the store is killed after this long (and counts as the store unreachable). */
  timeoutMs?: number;
}

/** The settings a call to the store runs git with, on top of git.ts's pins. */
export function storeAccess(store: GitStoreLocation, timeoutMs = DEFAULT_STORE_TIMEOUT_MS): GitNetworkAccess {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const config = [
    // A credential helper or askpass program named by any config would be a program of its choosing.
    'credential.helper=',
    'core.askPass=',
    `protocol.${store.scheme}.allow=always`,
    // A store on a path gets these settings too: no `gc --auto` started after each push (gc.auto=0
    // pinned makes it a no-op there anyway).
    'receive.autogc=false',
  ];
  const env: Record<string, string> = {};
  if (store.scheme === 'ssh') {
    config.push(
      `core.sshCommand=ssh -o BatchMode=yes -o ConnectTimeout=${Math.min(seconds, 30)} -o ServerAliveInterval=15 -o ServerAliveCountMax=2`,
    );
    // ssh finds the worker user's keys and known hosts in its home; git's global config stays off.
    env.HOME = os.homedir();
    if (store.sshAgentSocket) env.SSH_AUTH_SOCK = store.sshAgentSocket;
  }
  if (store.scheme === 'http' || store.scheme === 'https') {
    // A stalled transfer ends after 30 s even within a long time limit (a first push can be large).
    config.push('http.lowSpeedLimit=1000', 'http.lowSpeedTime=30');
  }
  return { config, env, timeoutMs };
}

/**
 * Creates the default store (a bare repository under ACA_HOME) if it is not there yet. Made
 * under a name of its own and renamed into place, so two workers starting at once both end up
 * using the one that won. A configured store is never created: a wrong path should fail, not
 * quietly start an empty store.
 */
export async function ensureGitStore(store: GitStoreLocation): Promise<void> {
  if (!store.isDefault || fs.existsSync(path.join(store.url, 'HEAD'))) return;
  const temporary = `${store.url}.new-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  try {
    fs.mkdirSync(path.dirname(store.url), { recursive: true, mode: 0o700 });
    await git({ gitDir: temporary }, ['init', '--bare', '--quiet']);
    // The store's reflogs are the way back if a branch is ever moved by mistake.
    await git({ gitDir: temporary }, ['config', 'core.logAllRefUpdates', 'always']);
    try {
      fs.renameSync(temporary, store.url);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
    }
  } catch (err) {
    const detail = err instanceof GitError ? err.stderr : (err as Error).message;
    if (isDiskFull(detail)) throw new WorkerDiskFullError(store.url, detail.trim());
    throw new GitStoreUnreachableError(store.display, 'create', detail.trim());
  } finally {
    fs.rmSync(temporary, { recursive: true, force: true });
  }
  if (!fs.existsSync(path.join(store.url, 'HEAD'))) {
    throw new GitStoreUnreachableError(store.display, 'create', `${store.url} is not a git repository`);
  }
}

/** Where the store's branch is: its commit, or null when the store has no such branch. */
export async function storeBranchTip(
  store: GitStoreLocation,
  gitDir: string,
  branch: string,
  options: StoreCallOptions = {},
): Promise<string | null> {
  await ensureGitStore(store);
  const ref = `refs/heads/${branch}`;
  const listed = await callStore(store, 'read', gitDir, options, [
    'ls-remote',
    '--upload-pack=git-upload-pack',
    '--refs',
    '--',
    store.url,
    ref,
  ]);
  const line = listed.stdout.split('\n').find((l) => l.endsWith(`\t${ref}`));
  return line ? line.split('\t')[0]! : null;
}

/** One git call to the store; a failure to reach it or to write on this disk becomes its own error. */
export async function callStore(
  store: GitStoreLocation,
  operation: 'push' | 'fetch' | 'read',
  gitDir: string,
  options: StoreCallOptions,
  args: string[],
  allowExitCodes: number[] = [],
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  try {
    return await gitWithStatus({ gitDir }, args, {
      network: storeAccess(store, timeoutMs),
      allowExitCodes,
    });
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    if (err.timedOut) {
      throw new GitStoreUnreachableError(
        store.display,
        operation,
        `no answer within ${Math.round(timeoutMs / 1000)}s`,
      );
    }
    throw storeFault(store, operation, gitDir, err.stderr);
  }
}

export function storeFault(
  store: GitStoreLocation,
  operation: 'push' | 'fetch' | 'read',
  gitDir: string,
  stderr: string,
): Error {
  const detail = redactStore(stderr.trim().split('\n').slice(-3).join(' '), store) || 'git gave no reason';
  // A fetch writes on this worker's disk; a push to a path writes on the store's (maybe the same).
  if (isDiskFull(stderr))
    return new WorkerDiskFullError(operation === 'push' ? store.display : gitDir, detail);
  return new GitStoreUnreachableError(store.display, operation, detail);
}
