/**
 * Steps that read or change a run's work tree run on the host that has it (its task queue), and
 * start from the commit the workflow recorded; a step that changes files commits them itself.
 */
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkTreeTooLargeError, type CommitRequest, type HostRuns } from '../repo';
import type { RunGit, RunPlace } from '../shared/run-types';
import { withHeartbeats } from './heartbeats';
import { asStoreFailure } from './store-failures';
import { FAILURE_TYPES } from '../shared/failure-types';

/** Runs `work` in the run's work tree, brought to the recorded commit first when it is elsewhere. */
export async function atRecordedCommit<T>(
  host: HostRuns,
  place: RunPlace,
  work: (git: RunGit) => Promise<T>,
): Promise<T> {
  let runGit: RunGit;
  try {
    runGit = await host.atCommit(place);
  } catch (err) {
    throw asStoreFailure(err);
  }
  return work(runGit);
}

/**
 * What the turn before a host step left uncommitted: that step commits it before its own work, so
 * closing a turn costs no round trip of its own.
 */
export interface PendingCommit {
  message: string;
  /** Names the commit step, unique within the execution (see HostRuns.commit). */
  step: string;
  /** The workflow execution the step belongs to. */
  execution: string;
}

/**
 * Runs `work` at the recorded commit after committing `pending` on top of it (when given). The
 * commit is made before the work tree is brought anywhere: a retry of the step must find the
 * commit its first try made. Returns the new commit (null: nothing to commit) with the result.
 */
export async function afterPendingCommit<T>(
  host: HostRuns,
  place: RunPlace,
  pending: PendingCommit | undefined,
  work: (git: RunGit, place: RunPlace) => Promise<T>,
): Promise<{ result: T; commit: string | null }> {
  // A push to a slow store can take seconds: the beats keep a long-queued step from timing out.
  const commit = pending ? await withHeartbeats(5_000, () => commitStep(host, place, pending)) : null;
  const at = commit ? { ...place, commit } : place;
  const result = await atRecordedCommit(host, at, (git) => work(git, at));
  return { result, commit };
}

/** Commits what the step changed on the run's branch (and pushes it, with a store); null: nothing changed. */
export async function commitStep(
  host: HostRuns,
  place: RunPlace,
  request: Omit<CommitRequest, 'warn'>,
): Promise<string | null> {
  try {
    return await host.commit(place, { ...request, warn: warnInActivity });
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
      type: FAILURE_TYPES.workTreeTooLarge,
      nonRetryable: true,
      details: [{ path: err.largestPath, bytes: err.largestBytes, totalBytes: err.totalBytes }],
    });
  }
  return asStoreFailure(err);
}
