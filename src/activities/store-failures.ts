/**
 * The git store's errors as the failures Temporal acts on: a refused push or a commit the store
 * lacks ends the step at once (retrying cannot change them); a store out of reach or a full disk
 * is retried, and when the retries run out the message still names the store or the disk.
 */
import { ApplicationFailure } from '@temporalio/common';
import {
  GitError,
  GitStoreMissingCommitError,
  GitStorePushRejectedError,
  GitStoreUnreachableError,
  isDiskFull,
  WorkerDiskFullError,
} from '../repo';
import { FAILURE_TYPES } from '../shared/failure-types';

export function asStoreFailure(err: unknown): unknown {
  if (err instanceof GitStorePushRejectedError) {
    return ApplicationFailure.create({
      message: err.message,
      type: FAILURE_TYPES.gitStorePushRejected,
      nonRetryable: true,
      details: [{ store: err.store, branch: err.branch, expected: err.expected, actual: err.actual ?? null }],
    });
  }
  if (err instanceof GitStoreMissingCommitError) {
    return ApplicationFailure.create({
      message: err.message,
      type: FAILURE_TYPES.gitStoreMissingCommit,
      nonRetryable: true,
      details: [{ store: err.store, branch: err.branch, commit: err.commit }],
    });
  }
  if (err instanceof GitStoreUnreachableError) {
    return ApplicationFailure.create({
      message: err.message,
      type: FAILURE_TYPES.gitStoreUnreachable,
      nonRetryable: false,
      details: [{ store: err.store, operation: err.operation }],
    });
  }
  if (err instanceof WorkerDiskFullError) {
    return ApplicationFailure.create({
      message: err.message,
      type: FAILURE_TYPES.workerDiskFull,
      nonRetryable: false,
      details: [{ where: err.where }],
    });
  }
  // A commit or checkout on this worker's own disk.
  if (err instanceof GitError && isDiskFull(err.stderr)) {
    return ApplicationFailure.create({
      message: `no space left on this worker's disk: ${err.message}`,
      type: FAILURE_TYPES.workerDiskFull,
      nonRetryable: false,
    });
  }
  return err;
}
