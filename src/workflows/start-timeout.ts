import { ActivityFailure, TimeoutFailure } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';

/** A step that no worker of its task queue started in time: the host it was sent to is gone or full. */
export function isStartTimeout(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
  );
}
