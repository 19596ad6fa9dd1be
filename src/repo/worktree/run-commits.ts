/**
 * Where the client (`aca diff`, `aca apply`, a linked run's check) reads a run's commits. The
 * run's git directory is on the disk where the run was prepared, and with workers on other hosts
 * it may lack the last commits, or not be on this machine at all; the git store has them all.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunPlace } from '../../shared/run-types';
import { discoverRepository, git } from '../git/git';
import { hasCommitAt } from '../git/objects';
import type { GitStoreLocation } from '../git/git-store-location';
import { fetchStoreBranch } from '../git/git-store';
import * as crypto from 'node:crypto';
import { safeKey } from '../../shared/safe-key';

export interface RunCommitsQuery {
  place: RunPlace;
  /** The user's repository of a `--repo` run (its path on the machine that started it). */
  repo: string | null;
  /** The commit that must be readable. */
  commit: string;
}

/**
 * A git directory on this machine that holds `commit`: the run's own when it does; else, with a
 * configured store, the user's repository of a `--repo` run when applying it (objects fetched
 * into it, no ref written), else a repository of this machine's kept for reading runs.
 * Null when none of them has it.
 */
export async function gitDirWithCommit(
  store: GitStoreLocation,
  home: string,
  query: RunCommitsQuery,
  /** `aca apply` reads them in the user's repository, which it changes anyway; the others never do. */
  into: 'repository' | 'reading-copy' = 'reading-copy',
): Promise<Pick<RunPlace, 'gitDir' | 'commonDir'> | null> {
  const { place } = query;
  if (await hasCommitAt(place.commonDir, query.commit)) return place;
  if (store.isDefault) return null;
  let target: Pick<RunPlace, 'gitDir' | 'commonDir'>;
  if (into === 'repository' && query.repo && fs.existsSync(query.repo)) {
    const { commonDir } = await discoverRepository(query.repo);
    target = { gitDir: commonDir, commonDir };
  } else {
    const gitDir = path.join(home, 'read-runs', `${runFolderName(place.workflowId)}.git`);
    if (!fs.existsSync(path.join(gitDir, 'HEAD'))) {
      fs.mkdirSync(path.dirname(gitDir), { recursive: true, mode: 0o700 });
      await git({ gitDir }, ['init', '--bare', '--quiet']);
    }
    target = { gitDir, commonDir: gitDir };
  }
  if (!(await hasCommitAt(target.commonDir, query.commit))) {
    await fetchStoreBranch(store, target.commonDir, place.branch);
  }
  return (await hasCommitAt(target.commonDir, query.commit)) ? target : null;
}

/** One folder name per workflow id: readable, and unique even for ids that differ only in odd characters. */
export function runFolderName(workflowId: string): string {
  const digest = crypto.createHash('sha256').update(workflowId).digest('hex').slice(0, 12);
  return `${safeKey(workflowId).slice(0, 80)}-${digest}`;
}
