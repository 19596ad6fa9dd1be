import type { AcaConfig } from '../config';
import { gitDirWithCommit } from '../repo';
import { RunStateError } from '../shared/errors';
import type { RunResult, RunSnapshot } from '../shared/run-types';

/** A run's git directory and the two commits its diff spans. */
export interface RunCommits {
  git: NonNullable<RunSnapshot['git']>;
  base: string;
  head: string;
}

/** The commits a run recorded; a run whose workspace was never prepared has none. */
export function runCommits(id: string, snapshot: RunResult): RunCommits {
  const git = snapshot.git;
  if (git === null || !snapshot.baseCommit) {
    throw new RunStateError(id, `run ${id} has no commits yet (its workspace is not prepared)`);
  }
  return { git, base: snapshot.baseCommit, head: snapshot.headCommit ?? snapshot.baseCommit };
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
    { workflowId: id, branch: snapshot.branch, git: commits.git, repo: snapshot.repo, commit: commits.head },
    into,
  );
  return here ? { ...commits, git: here } : commits;
}
