/**
 * What can go wrong between a worker and the git store, sorted by what should happen next: a
 * store out of reach and a full disk are worth retrying (later, or on another worker); a push the
 * store refused because the branch moved never is, since only a forced push would get past it and
 * that would throw away commits someone else made.
 */
import { SystemError, AcaError } from '../../shared/errors';

/** The store could not be reached, or gave up mid-way (a network fault, a timeout, an absent path). */
export class GitStoreUnreachableError extends SystemError {
  constructor(
    /** The store as it may be shown (no credentials). */
    readonly store: string,
    readonly operation: 'push' | 'fetch' | 'read' | 'create',
    readonly detail: string,
  ) {
    super(`the git store ${store} cannot be reached (${operation}): ${detail}`);
  }
}

/** The store's branch is not where this push expected it: another push moved it. */
export class GitStorePushRejectedError extends AcaError {
  constructor(
    readonly store: string,
    readonly branch: string,
    /** The commit the push expected the branch at; null: expected no such branch. */
    readonly expected: string | null,
    /** Where the branch is in the store, if that could be read; null: it is not there. */
    readonly actual: string | null | undefined,
    readonly reason: string,
  ) {
    super(
      `the git store ${store} refused the push of branch ${branch} (${reason}): ` +
        `expected it ${expected ? `at ${expected}` : 'to be absent'}, ` +
        (actual === undefined
          ? 'could not read where it is'
          : actual
            ? `it is at ${actual}`
            : 'it is absent') +
        '; aca never forces a push over commits it did not make',
    );
  }
}

/** The store does not hold the commit a run recorded: the run's history there is not what it was. */
export class GitStoreMissingCommitError extends AcaError {
  constructor(
    readonly store: string,
    readonly branch: string,
    readonly commit: string,
  ) {
    super(`the git store ${store} has no commit ${commit} on branch ${branch}`);
  }
}

/** This worker's disk is full: git could not write the run's objects or files. */
export class WorkerDiskFullError extends SystemError {
  constructor(
    readonly where: string,
    readonly detail: string,
  ) {
    super(`no space left on this worker's disk at ${where}: ${detail}`);
  }
}

export function isDiskFull(text: string): boolean {
  return /No space left on device|ENOSPC|Disk quota exceeded|EDQUOT/i.test(text);
}
