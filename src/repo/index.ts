/**
 * Git for runs: a worktree and branch per run, hardened against what the code under test leaves
 * in it, the git store every worker reaches, and the review commands (`aca diff`, `aca apply`,
 * `aca discard`) that take a run's changes to the user.
 *
 * The one way into src/repo from the rest of aca, its tests and its benchmarks. Inside:
 * - git/: running git itself so nothing in a work tree steers it (git.ts), what git makes of a
 *   commit's objects and names (links, embedded git directories, hooks, unaddable names), and the
 *   git store that carries each run's branch between hosts;
 * - worktree/: a run's files on its host: the run's repository and worktree, the runs a host
 *   holds and their task queues, commits and their size check, putting a work tree back to a
 *   commit, and where the client reads a run's commits;
 * - review/: a run's changes as the user meets them: diff, apply onto the user's branch, discard,
 *   and the risks a reviewer cannot see in a diff;
 * - config/: what the project says about itself: `.aca.json`, its language, the test
 *   configuration and files of its base commit, the target tests it names, its instructions
 *   for agents (AGENTS.md and the like).
 */
export { discoverRepository, git, GitError, type GitTarget } from './git/git';
export { hasCommitAt } from './git/objects';
export { deleteStoreBranch, fetchStoreBranch, pushRunCommit } from './git/git-store';
export {
  GitStoreMissingCommitError,
  GitStorePushRejectedError,
  GitStoreUnreachableError,
  isDiskFull,
  WorkerDiskFullError,
} from './git/git-store-errors';
export { type GitStoreLocation, parseGitStoreLocation } from './git/git-store-location';
export { type CommitRequest, HostRuns } from './worktree/host-runs';
export { createRunWorktree, removeRunWorktree, withWorktreeLock } from './worktree/run-worktree';
export { makeRunRepository, type MadeRunRepository, type RunStart } from './worktree/make-run-repository';
export { gitDirWithCommit } from './worktree/run-commits';
export {
  changedFilesBetween,
  createFreshRunRepository,
  enclosingWorkTree,
  isValidBranchName,
  readProjectConfigAt,
  resolveRepository,
  runBranch,
} from './worktree/run-repository';
export { WorkTreeTooLargeError } from './worktree/commit-size';
export { walkSmallTree } from './worktree/small-tree';
export { diffRun, diffRunBytes } from './review/diff-run';
export { applyMessage, applyRun, type ApplyRunResult } from './review/apply-run';
export { ApplyConflictError, ApplyNeedsConsentError, UncommittedChangesError } from './review/apply-errors';
export { discardRun, type DiscardRunResult } from './review/discard-run';
export { clearDiscarded, discardedAt, markDiscarded, wasApplied } from './review/discard-guard';
export {
  type ApplyAllowances,
  type ReviewChange,
  type ReviewRisk,
  type ReviewRiskKind,
  reviewRisks,
} from './review/review-risks';
export {
  checkProjectLimits,
  clampProjectLimits,
  NO_PROJECT_CONFIG,
  PROJECT_CONFIG_FILE,
  type ProjectConfig,
} from './config/project-config';
export { repositoryLanguage } from './config/repo-language';
export { type BaseTestConfig, writeBaseTestConfig } from './config/base-test-config';
export { writeBaseTestFiles, writeBaseTestHelpers } from './config/base-test-files';
export { checkTargets } from './config/target-files';
export {
  DEFAULT_INSTRUCTION_TOKENS,
  type InstructionFile,
  type ProjectInstructions,
  readProjectInstructions,
} from './config/project-instructions';

// Parts exposed for their own tests (src/repo is reached through here there too).
export { gitBytes, gitWithStatus } from './git/git';
export { isUnaddableName } from './git/unaddable-names';
export { type CommitTree, linkReach } from './git/link-targets';
export { pushRunBranchTip } from './git/git-store';
export { callStore, ensureGitStore, storeBranchTip } from './git/store-access';
export { bringToCommit } from './worktree/bring-to-commit';
export { commitAll, diffCommits, type RunWorktree } from './worktree/run-worktree';
export { resetWorkTree, workTreeIsAt } from './worktree/work-tree-reset';
export { checkCommitSize } from './worktree/commit-size';
export type { ApplyRunOptions } from './review/apply-run';
export { parseProjectConfig } from './config/project-config';
