import { AcaError, UserInputError } from '../shared/errors';

/**
 * The run's changes do not go onto the user's branch as they stand: the same lines changed on
 * both sides, or a file the run adds is in the way in the working tree. Nothing was changed.
 * Not the user's input at fault, so the command line exits 1 rather than 2.
 */
export class ApplyConflictError extends AcaError {
  constructor(
    readonly files: string[],
    message: string,
  ) {
    super(message);
  }
}

/** Tracked files of the user's checkout have changes not yet committed; applying would mix them in. */
export class UncommittedChangesError extends UserInputError {
  constructor(
    readonly repository: string,
    readonly files: string[],
  ) {
    super(
      `${files.length} tracked file(s) in ${repository} have uncommitted changes (${listFiles(files)}); commit or stash them first`,
    );
  }
}

/** A few file names for a one-line message, with how many more there are. */
export function listFiles(files: readonly string[], shown = 5): string {
  const head = files.slice(0, shown).join(', ');
  return files.length > shown ? `${head} and ${files.length - shown} more` : head;
}
