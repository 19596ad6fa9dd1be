/**
 * What an instance's agent run left for its evaluation: the patch it made, read from wherever this
 * host has the run's commits, and its checkout removed once the patch is evaluated.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fetchStoreBranch, git, withWorktreeLock, type GitStoreLocation } from '../repo';
import type { RunPlace } from '../shared/run-types';

export interface RunCommits {
  place: RunPlace;
  baseCommit: string;
  headCommit: string;
}

/**
 * The run's changes from its base commit, as a binary-safe unified diff; null when it is larger
 * than `maxBytes`. Read from the run's own git directory when this host has it, else from this
 * host's copy of the instance's repository (`repoPath`), with the run's branch fetched from the
 * git store.
 */
export async function runPatch(
  run: RunCommits,
  repoPath: string,
  gitStore: GitStoreLocation | null,
  maxBytes: number,
): Promise<string | null> {
  if (run.baseCommit === run.headCommit) return '';
  const diff = await git({ gitDir: await gitDirHoldingRun(run.place, repoPath, gitStore) }, [
    'diff',
    '--binary',
    '--no-ext-diff',
    '--no-textconv',
    '--no-renames',
    '--ignore-submodules=all',
    '--end-of-options',
    run.baseCommit,
    run.headCommit,
  ]);
  return Buffer.byteLength(diff) > maxBytes ? null : diff;
}

async function gitDirHoldingRun(
  place: RunPlace,
  repoPath: string,
  gitStore: GitStoreLocation | null,
): Promise<string> {
  if (fs.existsSync(place.commonDir) || !gitStore) return place.commonDir;
  const gitDir = path.join(repoPath, '.git');
  await fetchStoreBranch(gitStore, gitDir, place.branch);
  return gitDir;
}

/**
 * The run's work tree once its patch is evaluated: a batch of thousands of instances would
 * otherwise keep a checkout of each. Its branch stays, with every commit of the run; a run whose
 * files are on another host is that host's to clean.
 */
export async function removeRunCheckout(place: RunPlace): Promise<void> {
  if (!fs.existsSync(place.commonDir)) return;
  const common = { gitDir: place.commonDir };
  await withWorktreeLock(place.commonDir, () =>
    git(common, ['worktree', 'remove', '--force', '--force', '--', place.workTree]).catch(async () => {
      fs.rmSync(place.workTree, { recursive: true, force: true });
      await git(common, ['worktree', 'prune']);
    }),
  );
}
