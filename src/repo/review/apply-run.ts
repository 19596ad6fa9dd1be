import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';
import {
  ApplyConflictError,
  ApplyNeedsConsentError,
  listFiles,
  UncommittedChangesError,
} from './apply-errors';
import { git, GitError, readUserIdentity, type GitTarget } from '../git/git';
import { isCommit, treeOf } from '../git/objects';
import { reviewRisks, risksNeedingConsent, type ReviewRisk } from './review-risks';
import { squashTree } from './squash-tree';
import {
  checkoutTarget,
  currentBranch,
  openUserCheckout,
  refuseOperationInProgress,
  uncommittedTrackedFiles,
  type UserCheckout,
} from './user-checkout';

export interface ApplyRunOptions {
  /** The user's checkout to apply to (its top level or any folder in it). */
  repoDir: string;
  /** The git directory holding the run's commits; when given, `repoDir` must share it. */
  commonDir?: string;
  /** The commit the run started from. */
  base: string;
  /** The run's last commit. */
  head: string;
  message: string;
  /** Apply new binary files too (else refused: the diff cannot show them). */
  allowBinary?: boolean;
  /** Apply links that point outside the repository or into a git directory too (else refused). */
  allowLinks?: boolean;
  /** Apply added or changed `.gitattributes` too (else refused: they change the bytes git writes). */
  allowAttributes?: boolean;
}

export type ApplyRunResult =
  | {
      applied: true;
      commit: string;
      branch: string;
      files: string[];
      /** What the applied changes hold that needs a reviewer's care (review-risks.ts). */
      reviewWithCare: ReviewRisk[];
    }
  | { applied: false; reason: 'run-changed-nothing' | 'already-applied'; branch: string };

/** The commit message of an applied run: the task's first line, then where the changes came from. */
export function applyMessage(task: string, runId: string, runBranch: string | null): string {
  const line =
    task
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? '';
  return `${line || `aca run ${runId}`}\n\nApplied from aca run ${runId}${runBranch ? ` (branch ${runBranch})` : ''}.\n`;
}

async function requireCommit(target: GitTarget, commit: string, what: string): Promise<void> {
  if (!(await isCommit(target, commit))) {
    throw new UserInputError(`${what} ${commit} is not in the repository (was the run discarded?)`);
  }
}

/**
 * Files git names when it refuses a checkout: the tab-indented lines after "would be overwritten"
 * or "would be removed".
 */
function filesInTheWay(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('\t'))
    .map((line) => line.trim())
    .filter(Boolean);
}

/**
 * Moves the user's branch, index and working tree to `commit`, a child of their HEAD. A
 * fast-forward checks every file before it writes any, so when one is in the way (an untracked
 * or ignored file the run adds too) nothing changes and the refusal is a conflict.
 */
async function fastForward(checkout: UserCheckout, commit: string): Promise<void> {
  // git merge records the old HEAD in ORIG_HEAD before it knows whether it can go ahead; a
  // refused apply puts the user's ORIG_HEAD back, so nothing at all has changed.
  const origHead = path.join(checkout.gitDir, 'ORIG_HEAD');
  const savedOrigHead = fs.existsSync(origHead) ? fs.readFileSync(origHead) : null;
  try {
    await git(checkoutTarget(checkout), [
      'merge',
      '--ff-only',
      '--quiet',
      '--no-stat',
      '--no-autostash',
      '--no-verify-signatures',
      // Ignored files (a .env, build output) are the user's too: in the way, they stop the merge.
      '--no-overwrite-ignore',
      commit,
    ]);
  } catch (err) {
    if (savedOrigHead === null) fs.rmSync(origHead, { force: true });
    else fs.writeFileSync(origHead, savedOrigHead);
    if (!(err instanceof GitError)) throw err;
    const files = filesInTheWay(err.stderr);
    throw new ApplyConflictError(
      files,
      files.length > 0
        ? `cannot apply: ${listFiles(files)} in ${checkout.topLevel} would be overwritten (untracked or ignored files); move them away and try again; nothing was changed`
        : `cannot apply: git refused to fast-forward ${checkout.topLevel} (${err.stderr.trim().split('\n')[0] ?? ''}); nothing was changed`,
    );
  }
}

/**
 * Brings the changes a run made (`base`..`head`) onto the branch checked out in the user's
 * repository as one new commit, or changes nothing at all:
 *
 * - refused (UserInputError) when tracked files have uncommitted changes, HEAD is detached, or a
 *   merge, rebase … is in progress; untracked files are left alone;
 * - refused (ApplyNeedsConsentError) when the run adds links that point outside the repository
 *   or into a git directory, new binary files, or new or changed `.gitattributes`, unless allowed;
 * - the result is computed in the object store first; conflicting changes are an
 *   ApplyConflictError naming the files, and the branch, index and working tree are untouched;
 * - then the branch is fast-forwarded to the new commit, which moves index and files with it.
 *
 * Runs no hook, filter or driver of the user's (see git.ts).
 */
export async function applyRun(options: ApplyRunOptions): Promise<ApplyRunResult> {
  const checkout = await openUserCheckout(options.repoDir, options.commonDir);
  refuseOperationInProgress(checkout);
  const { branch, head: userHead } = await currentBranch(checkout);
  const objects: GitTarget = { gitDir: checkout.commonDir };
  await requireCommit(objects, options.base, "the run's base commit");
  await requireCommit(objects, options.head, "the run's last commit");

  if ((await treeOf(objects, options.head)) === (await treeOf(objects, options.base))) {
    return { applied: false, reason: 'run-changed-nothing', branch };
  }
  // Computed in the object store alone (nothing referenced, nothing written to the checkout), so
  // that links are judged where they will land: a folder of the user's may since be a link.
  const merged = await squashTree(objects, { base: options.base, onto: userHead, head: options.head });
  const alreadyApplied = merged.clean && merged.tree === (await treeOf(objects, userHead));
  const commit =
    merged.clean && !alreadyApplied
      ? (
          await git(
            objects,
            ['commit-tree', '--no-gpg-sign', merged.tree, '-p', userHead, '-m', options.message],
            { author: await readUserIdentity(checkoutTarget(checkout)) },
          )
        ).trim()
      : null;
  const reviewWithCare = await reviewRisks(objects, options.base, options.head, commit ?? options.head);
  const refused = risksNeedingConsent(reviewWithCare, options);
  if (refused.length > 0) throw new ApplyNeedsConsentError(refused);
  const dirty = await uncommittedTrackedFiles(checkout);
  if (dirty.length > 0) throw new UncommittedChangesError(checkout.topLevel, dirty);

  if (!merged.clean) {
    throw new ApplyConflictError(
      merged.conflicts,
      `cannot apply: the run's changes conflict with ${branch} in ${listFiles(merged.conflicts)}; nothing was changed`,
    );
  }
  if (alreadyApplied || commit === null) return { applied: false, reason: 'already-applied', branch };
  await fastForward(checkout, commit);
  const files = await git(objects, [
    'diff-tree',
    '-r',
    '-z',
    '--name-only',
    '--no-renames',
    userHead,
    commit,
  ]);
  return { applied: true, commit, branch, files: files.split('\0').filter(Boolean), reviewWithCare };
}
