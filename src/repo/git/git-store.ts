/**
 * The git store: the repository every worker reaches (ACA_GIT_STORE) that holds each run's branch
 * `aca/<workflowId>`. A step that changed files pushes its commit here; a worker about to run a
 * step of a run it holds at another commit (or not at all) brings the work tree to the recorded
 * commit from here first.
 *
 * Every call goes through git.ts (pinned configuration, explicit git directory) with only the
 * store's own protocol opened, no credential helper or askpass program from any config, no
 * prompt, and a time limit. Pushes never force: each names the commit it expects the store's
 * branch at, and a store whose branch is elsewhere refuses it.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunGit } from '../../shared/run-types';
import { git, GitError, gitWithStatus, type GitNetworkAccess, type GitTarget } from './git';
import { redactStore, type GitStoreLocation } from './git-store-location';
import {
  GitStoreMissingCommitError,
  GitStorePushRejectedError,
  GitStoreUnreachableError,
  isDiskFull,
  WorkerDiskFullError,
} from './git-store-errors';
import { isCommit } from './objects';
import { resetWorkTree, workTreeIsAt } from '../worktree/work-tree-reset';

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

/**
 * Pushes `commit` to the store's `refs/heads/<branch>` if, and only if, the store's branch is at
 * `expectedOld` (null: the store must not have the branch). Done already (the branch is at
 * `commit`) counts as done, so a retried step pushes again safely. A store without the branch
 * takes it whatever was expected: creating a branch overwrites no one's commits, and it lets a
 * run that began before its worker had a store go on.
 *
 * @throws GitStorePushRejectedError (never worth retrying) when the branch is elsewhere;
 *   GitStoreUnreachableError or WorkerDiskFullError (worth retrying) when the push did not happen.
 */
export async function pushRunCommit(
  store: GitStoreLocation,
  runGit: RunGit,
  branch: string,
  commit: string,
  expectedOld: string | null,
  options: StoreCallOptions = {},
): Promise<void> {
  await ensureGitStore(store);
  const first = await pushWithLease(store, runGit, branch, commit, expectedOld, options);
  if (first.ok) return;
  const actual = await storeBranchTip(store, runGit.commonDir, branch, options).catch(() => undefined);
  if (actual === commit) return;
  if (actual === null && expectedOld !== null) {
    const again = await pushWithLease(store, runGit, branch, commit, null, options);
    if (again.ok) return;
  }
  throw new GitStorePushRejectedError(store.display, branch, expectedOld, actual, first.reason);
}

/**
 * Pushes the run's branch as it is on this worker, expecting the store at the tip's parent: the
 * tip before the step's commit, or, when the step committed nothing, where the store is unless
 * an earlier try of the step committed and could not push (then the parent is where the store
 * is). Call it right after the step's commit, in the same activity.
 *
 * @returns the commit pushed (the branch's tip).
 */
export async function pushRunBranchTip(
  store: GitStoreLocation,
  runGit: RunGit,
  branch: string,
  options: StoreCallOptions = {},
): Promise<string> {
  const target = { gitDir: runGit.commonDir };
  const tip = (
    await git(target, ['rev-parse', '--verify', '--end-of-options', `refs/heads/${branch}`])
  ).trim();
  const parent = await git(target, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${tip}^`], {
    allowExitCodes: [1],
  });
  await pushRunCommit(store, runGit, branch, tip, parent.trim() || null, options);
  return tip;
}

/**
 * Removes a run's branch from the store (`aca discard`), if it is still where it was read a
 * moment before: a branch someone moved in between stays. A default store that was never made
 * has nothing to remove and is not made for it.
 *
 * @returns the commit the branch was at, or null when the store had no such branch.
 */
export async function deleteStoreBranch(
  store: GitStoreLocation,
  branch: string,
  options: StoreCallOptions = {},
): Promise<string | null> {
  if (!branch.startsWith('aca/')) throw new Error(`"${branch}" is not a run's branch`);
  if (store.isDefault && !fs.existsSync(path.join(store.url, 'HEAD'))) return null;
  // push needs a repository to run in; the run's own may be gone already.
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-store-delete-'));
  try {
    await git({ gitDir: scratch }, ['init', '--bare', '--quiet']);
    const tip = await storeBranchTip(store, scratch, branch, options);
    if (tip === null) return null;
    const ref = `refs/heads/${branch}`;
    const result = await callStore(
      store,
      'push',
      scratch,
      options,
      [
        'push',
        '--porcelain',
        '--receive-pack=git-receive-pack',
        `--force-with-lease=${ref}:${tip}`,
        '--',
        store.url,
        `:${ref}`,
      ],
      [1],
    );
    const line = result.stdout.split('\n').find((l) => l.includes(`:${ref}\t`));
    if (line?.startsWith('!')) {
      const actual = await storeBranchTip(store, scratch, branch, options).catch(() => undefined);
      throw new GitStorePushRejectedError(
        store.display,
        branch,
        tip,
        actual,
        line.split('\t')[2] ?? 'rejected',
      );
    }
    if (!line && result.code !== 0) throw storeFault(store, 'push', scratch, result.stderr);
    return tip;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

type PushOutcome = { ok: true } | { ok: false; reason: string };

async function pushWithLease(
  store: GitStoreLocation,
  runGit: RunGit,
  branch: string,
  commit: string,
  expectedOld: string | null,
  options: StoreCallOptions,
): Promise<PushOutcome> {
  const ref = `refs/heads/${branch}`;
  const result = await callStore(
    store,
    'push',
    runGit.commonDir,
    options,
    [
      'push',
      '--porcelain',
      '--no-verify',
      '--no-signed',
      '--no-recurse-submodules',
      '--receive-pack=git-receive-pack',
      // An explicit lease, never a plain --force: the update happens only from the expected commit.
      `--force-with-lease=${ref}:${expectedOld ?? ''}`,
      '--',
      store.url,
      `${commit}:${ref}`,
    ],
    [1],
  );
  // --porcelain: "<flag>\t<from>:<to>\t<summary>" per ref; "!" marks one that was not updated.
  const line = result.stdout.split('\n').find((l) => l.includes(`:${ref}\t`));
  if (!line) {
    if (result.code === 0) return { ok: true };
    throw storeFault(store, 'push', runGit.commonDir, result.stderr);
  }
  if (!line.startsWith('!')) return { ok: true };
  const summary = line.split('\t')[2] ?? '';
  if (summary.startsWith('[remote rejected]') || summary.startsWith('[remote failure]')) {
    // The store took the connection but not the update (its disk, its permissions, a hook there).
    throw storeFault(store, 'push', runGit.commonDir, `${summary} ${result.stderr}`);
  }
  return { ok: false, reason: summary.replace(/^\[rejected\]\s*/, '').replace(/[()]/g, '') || 'rejected' };
}

/**
 * Makes `workTree` exactly `commit` of the run's branch (fetched from the store when this worker
 * does not have it), with `gitDir` as its git directory: an existing one (the run's own
 * repository, or its worktree's folder in the user's repository), or, on a worker that never saw
 * the run, a repository of its own made there. Tracked files are rewritten byte for byte,
 * untracked files the last step left are removed (ignored ones are kept unless asked, as a setup
 * command's installs are), and whatever git-like things the code under test planted (a `.git`
 * file or folder, nested repositories, symlinks where the commit has folders) are removed
 * without being followed or run.
 *
 * @returns the run's git locations on this worker, and whether anything had to change.
 */
export async function bringToCommit(
  store: GitStoreLocation,
  input: {
    workTree: string;
    gitDir: string;
    branch: string;
    commit: string;
    removeIgnored?: boolean;
  } & StoreCallOptions,
): Promise<{ git: RunGit; fetched: boolean; changed: boolean }> {
  const { workTree, gitDir, branch, commit } = input;
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit)) throw new Error(`"${commit}" is not a full commit id`);
  if (!branch.startsWith('aca/') || /[\s\0~^:?*[\\]|\.\.|@\{/.test(branch)) {
    throw new Error(`"${branch}" is not a run's branch`);
  }
  const madeHere = prepareWorkTreeFolder(workTree);
  const runGit = await openOrCreateRunRepository(gitDir, workTree, branch);
  const common: GitTarget = { gitDir: runGit.commonDir };
  let fetched = false;
  if (!(await isCommit(common, commit))) {
    await fetchStoreBranch(store, runGit.commonDir, branch, input);
    fetched = true;
    if (!(await isCommit(common, commit))) {
      throw new GitStoreMissingCommitError(store.display, branch, commit);
    }
  }
  const target = { gitDir: runGit.gitDir, workTree };
  const linked = runGit.gitDir !== runGit.commonDir;
  try {
    if (!fetched && (await workTreeIsAt(target, branch, commit, linked))) {
      return { git: runGit, fetched, changed: false };
    }
    await resetWorkTree(target, branch, commit, {
      linked,
      removeIgnored: input.removeIgnored ?? false,
      emptyFolder: madeHere,
    });
  } catch (err) {
    if (err instanceof GitError && isDiskFull(err.stderr))
      throw new WorkerDiskFullError(workTree, err.stderr.trim());
    if ((err as NodeJS.ErrnoException).code === 'ENOSPC')
      throw new WorkerDiskFullError(workTree, (err as Error).message);
    throw err;
  }
  return { git: runGit, fetched, changed: true };
}

/** The work tree's folder, made (empty) when absent: true when this call made it. */
function prepareWorkTreeFolder(workTree: string): boolean {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(workTree);
  } catch {
    stat = undefined;
  }
  if (stat && !stat.isDirectory()) throw new Error(`the run's workspace ${workTree} is not a folder`);
  if (stat) return false;
  fs.mkdirSync(workTree, { recursive: true });
  return true;
}

/**
 * The git directory at `gitDir` as this run's: a worktree's own folder (it has a `commondir`)
 * uses its repository's objects and branches; any other is the run's repository. Made, empty,
 * if absent: the fetch that follows fills it.
 */
async function openOrCreateRunRepository(gitDir: string, workTree: string, branch: string): Promise<RunGit> {
  if (fs.existsSync(path.join(gitDir, 'HEAD'))) {
    const commonFile = path.join(gitDir, 'commondir');
    const commonDir = fs.existsSync(commonFile)
      ? path.resolve(gitDir, fs.readFileSync(commonFile, 'utf8').trim())
      : gitDir;
    return { gitDir, commonDir, workTree };
  }
  fs.mkdirSync(path.dirname(gitDir), { recursive: true, mode: 0o700 });
  try {
    await git({ gitDir }, ['init', '--quiet', '--template=', `--initial-branch=${branch}`]);
  } catch (err) {
    if (err instanceof GitError && isDiskFull(err.stderr))
      throw new WorkerDiskFullError(gitDir, err.stderr.trim());
    throw err;
  }
  return { gitDir, commonDir: gitDir, workTree };
}

/** The store's branch's objects into the run's repository; no ref or FETCH_HEAD is written. */
export async function fetchStoreBranch(
  store: GitStoreLocation,
  gitDir: string,
  branch: string,
  options: StoreCallOptions = {},
): Promise<void> {
  await ensureGitStore(store);
  const ref = `refs/heads/${branch}`;
  try {
    await callStore(store, 'fetch', gitDir, options, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--upload-pack=git-upload-pack',
      '--',
      store.url,
      ref,
    ]);
  } catch (err) {
    if (err instanceof GitStoreUnreachableError && /couldn't find remote ref/i.test(err.detail)) {
      throw new GitStoreMissingCommitError(store.display, branch, '(the branch is not in the store)');
    }
    throw err;
  }
}

/** One git call to the store; a failure to reach it or to write on this disk becomes its own error. */
async function callStore(
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

function storeFault(
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
