/**
 * Steps that read or change a run's work tree run on the host that has it (its task queue), and
 * start from the commit the workflow recorded; a step that changes files commits them itself.
 */
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkTreeTooLargeError, type CommitRequest, type HostRuns } from '../repo';
import type { RunPlace } from '../shared/run-types';
import { asStoreFailure } from './store-failures';
import { FAILURE_TYPES } from '../shared/failure-types';

/**
 * What every step that reads or changes a run's files is given: where they are, and the last
 * commit the run recorded, which the step starts from.
 */
export interface HostStepInput {
  place: RunPlace;
  headCommit: string;
}

/** Runs `work` in the run's work tree, brought to the recorded commit first when it is elsewhere. */
export async function atRecordedCommit<T>(
  host: HostRuns,
  step: HostStepInput,
  work: (place: RunPlace) => Promise<T>,
): Promise<T> {
  let place: RunPlace;
  try {
    place = await host.atCommit(step.place, step.headCommit);
  } catch (err) {
    throw asStoreFailure(err);
  }
  return work(place);
}

/** Commits what the step changed on the run's branch (and pushes it, with a store); null: nothing changed. */
export async function commitStep(
  host: HostRuns,
  step: HostStepInput,
  request: Omit<CommitRequest, 'warn'>,
): Promise<string | null> {
  try {
    return await host.commit(step.place, step.headCommit, { ...request, warn: warnInActivity });
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
