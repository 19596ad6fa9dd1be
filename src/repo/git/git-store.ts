/**
 * The git store: the repository every worker reaches (ACA_GIT_STORE) that holds each run's branch
 * `aca/<workflowId>`. A step that changed files pushes its commit here; a worker about to run a
 * step of a run it holds at another commit (or not at all) brings the work tree to the recorded
 * commit from here first (bring-to-commit.ts).
 *
 * Pushes never force: each names the commit it expects the store's branch at, and a store whose
 * branch is elsewhere refuses it. Each call reaches the store as store-access.ts says.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunPlace } from '../../shared/run-types';
import { git } from './git';
import type { GitStoreLocation } from './git-store-location';
import {
  GitStoreMissingCommitError,
  GitStorePushRejectedError,
  GitStoreUnreachableError,
} from './git-store-errors';
import { callStore, ensureGitStore, storeBranchTip, storeFault, type StoreCallOptions } from './store-access';

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
  place: Pick<RunPlace, 'commonDir'>,
  branch: string,
  commit: string,
  expectedOld: string | null,
  options: StoreCallOptions = {},
): Promise<void> {
  await ensureGitStore(store);
  const first = await pushWithLease(store, place, branch, commit, expectedOld, options);
  if (first.ok) return;
  const actual = await storeBranchTip(store, place.commonDir, branch, options).catch(() => undefined);
  if (actual === commit) return;
  if (actual === null && expectedOld !== null) {
    const again = await pushWithLease(store, place, branch, commit, null, options);
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
  place: Pick<RunPlace, 'commonDir'>,
  branch: string,
  options: StoreCallOptions = {},
): Promise<string> {
  const target = { gitDir: place.commonDir };
  const tip = (
    await git(target, ['rev-parse', '--verify', '--end-of-options', `refs/heads/${branch}`])
  ).trim();
  const parent = await git(target, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${tip}^`], {
    allowExitCodes: [1],
  });
  await pushRunCommit(store, place, branch, tip, parent.trim() || null, options);
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
  place: Pick<RunPlace, 'commonDir'>,
  branch: string,
  commit: string,
  expectedOld: string | null,
  options: StoreCallOptions,
): Promise<PushOutcome> {
  const ref = `refs/heads/${branch}`;
  const result = await callStore(
    store,
    'push',
    place.commonDir,
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
    throw storeFault(store, 'push', place.commonDir, result.stderr);
  }
  if (!line.startsWith('!')) return { ok: true };
  const summary = line.split('\t')[2] ?? '';
  if (summary.startsWith('[remote rejected]') || summary.startsWith('[remote failure]')) {
    // The store took the connection but not the update (its disk, its permissions, a hook there).
    throw storeFault(store, 'push', place.commonDir, `${summary} ${result.stderr}`);
  }
  return { ok: false, reason: summary.replace(/^\[rejected\]\s*/, '').replace(/[()]/g, '') || 'rejected' };
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
