import { AcaError, UserInputError } from '../../shared/errors';
import { shownName } from '../../shared/shown-lines';
import type { ReviewRisk } from './review-risks';

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

/**
 * The run brings in what its diff cannot show and the user did not allow: links that point out of
 * the repository or into a git directory, new binary files, git attribute files that change the
 * bytes git writes. Nothing was changed. Names are shown
 * as shownName() shows them: a name of the run's cannot forge a line of the message.
 */
export class ApplyNeedsConsentError extends UserInputError {
  readonly files: string[];
  constructor(readonly risks: ReviewRisk[]) {
    const links = risks.filter((risk) => risk.needs === 'allow-links');
    const binaries = risks.filter((risk) => risk.needs === 'allow-binary');
    const attributes = risks.filter((risk) => risk.needs === 'allow-attributes');
    const parts = [
      links.length > 0 &&
        `${links.length} link(s) pointing outside the repository or into a git directory (${links.map((l) => `${shownName(l.path)} -> ${shownName(l.target ?? '')}`).join(', ')}; --allow-links applies them)`,
      binaries.length > 0 &&
        `${binaries.length} new binary file(s) (${binaries.map((b) => shownName(b.path)).join(', ')}; --allow-binary applies them)`,
      attributes.length > 0 &&
        `${attributes.length} git attribute file(s) (${attributes.map((a) => shownName(a.path)).join(', ')}; they change how apply writes files; --allow-attributes applies them)`,
    ].filter((part): part is string => Boolean(part));
    super(`cannot apply: the run adds ${parts.join(', ')}; review them first; nothing was changed`);
    this.files = risks.map((risk) => risk.path);
  }
}

/** A few file names for a one-line message, each shown visibly, with how many more there are. */
export function listFiles(files: readonly string[], count = 5): string {
  const head = files.slice(0, count).map(shownName).join(', ');
  return files.length > count ? `${head} and ${files.length - count} more` : head;
}
