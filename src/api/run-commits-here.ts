import type { AcaConfig } from '../config';
import { gitDirWithCommit } from '../repo';
import { RunStateError } from '../shared/errors';
import type { RunPlace, RunResult } from '../shared/run-types';

/** Where a run's commits are read and the two commits its diff spans. */
export interface RunCommits {
  place: Pick<RunPlace, 'gitDir' | 'commonDir'>;
  base: string;
  head: string;
}

/** The commits a run recorded; a run whose workspace was never prepared has none. */
export function runCommits(id: string, snapshot: RunResult): RunCommits & { place: RunPlace } {
  const place = snapshot.place;
  if (place === null || !snapshot.baseCommit) {
    throw new RunStateError(id, `run ${id} has no commits yet (its workspace is not prepared)`);
  }
  return { place, base: snapshot.baseCommit, head: snapshot.headCommit ?? snapshot.baseCommit };
}

/**
 * The run's commits where this machine can read them: the run's git directory, or, when the last
 * steps ran on another host, a copy fetched from the git store.
 */
export async function runCommitsHere(
  config: AcaConfig,
  id: string,
  snapshot: RunResult,
  into: 'repository' | 'reading-copy',
): Promise<RunCommits> {
  const commits = runCommits(id, snapshot);
  const here = await gitDirWithCommit(
    config.gitStore,
    config.home,
    { place: commits.place, repo: snapshot.repo, commit: commits.head },
    into,
  );
  return here ? { ...commits, place: here } : commits;
}
