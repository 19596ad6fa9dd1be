/**
 * Steps that read or change a run's work tree run in this worker's copy of it (see RunPlaces),
 * and a step that changes files commits them itself: with workers on other hosts, the next step
 * may run where this worker's disk is out of reach.
 */
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkTreeTooLargeError } from '../repo/commit-size';
import type { LocalRun, RunPlaces } from '../repo/run-places';
import { commitAll } from '../repo/run-worktree';
import type { RunPlace } from '../shared/run-types';
import { asStoreFailure } from './store-failures';

/**
 * Runs `work` in the run's work tree on this worker, brought to the recorded commit first when
 * this worker holds it elsewhere; without a place (a caller of the activity from before places),
 * in `workspace` as given.
 */
export async function inRunPlace<T>(
  places: RunPlaces | undefined,
  place: RunPlace | undefined,
  workspace: string,
  work: (local: LocalRun) => Promise<T>,
): Promise<T> {
  if (!place) {
    return work({ workspace, git: { gitDir: '', commonDir: '', workTree: workspace }, rebuilt: false });
  }
  if (!places) return work({ workspace: place.git.workTree, git: place.git, rebuilt: false });
  try {
    return await places.exclusive(place, async () => work(await places.open(place)));
  } catch (err) {
    throw asStoreFailure(err);
  }
}

/**
 * Commits what the step changed on the run's branch (and pushes it to the store, when there is
 * one); the commit, or null when nothing changed.
 */
export async function commitStep(
  places: RunPlaces | undefined,
  place: RunPlace,
  local: LocalRun,
  request: { message: string; step: string; paths?: string[]; author?: { name: string; email: string } },
): Promise<string | null> {
  try {
    if (!places) {
      return await commitAll(
        { ...local.git, branch: place.branch, baseCommit: '' },
        request.message,
        request.author,
        request.paths,
        warnInActivity,
      );
    }
    return await places.commit(place, local, { ...request, warn: warnInActivity });
  } catch (err) {
    throw asCommitFailure(err);
  }
}

/** A commit's warning in the activity's log, which carries the run's ids; outside an activity, stderr. */
export function warnInActivity(message: string): void {
  try {
    log.warn(message);
  } catch {
    process.stderr.write(`aca: warning: ${message}\n`);
  }
}

/**
 * A commit's errors as the failures Temporal acts on: a step too large to commit ends the run
 * (retrying cannot shrink it); the store's errors as asStoreFailure has them.
 */
export function asCommitFailure(err: unknown): unknown {
  if (err instanceof WorkTreeTooLargeError) {
    return ApplicationFailure.create({
      message: err.message,
      type: 'WorkTreeTooLarge',
      nonRetryable: true,
      details: [{ path: err.largestPath, bytes: err.largestBytes, totalBytes: err.totalBytes }],
    });
  }
  return asStoreFailure(err);
}
