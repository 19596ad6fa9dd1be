import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';
import type { RunPlace } from '../../shared/run-types';
import { git, type GitTarget } from '../git/git';
import { withWorktreeLock } from '../worktree/run-worktree';

export interface DiscardRunTarget {
  place: Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree' | 'branch'>;
  /** The user's repository of a `--repo` run; null for a run with a repository of its own. */
  repo: string | null;
}

/** What was removed; null for what was gone already. */
export interface DiscardRunResult {
  workTree: string | null;
  branch: string | null;
  /** The run's own git directory (runs without `--repo`). */
  gitDir: string | null;
  /** The git store the run's branch was removed from (as it may be shown); absent or null: none. */
  store?: string | null;
}

/** Only branches aca names are ever deleted, whatever a snapshot says. */
const RUN_BRANCH_PREFIX = 'aca/';

function realPath(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** A folder removed recursively must not be one whose loss would take far more than the run with it. */
function refuseSweepingRemoval(folder: string): void {
  const target = realPath(folder);
  const home = realPath(os.homedir());
  if (target === path.parse(target).root || home === target || home.startsWith(`${target}${path.sep}`)) {
    throw new UserInputError(`refusing to remove ${target}: it is not a folder of the run's own`);
  }
}

interface WorktreeEntry {
  path: string;
  branch: string | null;
}

/** The repository's worktrees as git records them (in the common directory, out of the run's reach); the main one first. */
async function listWorktrees(common: GitTarget): Promise<WorktreeEntry[]> {
  const output = await git(common, ['worktree', 'list', '--porcelain', '-z']);
  const entries: WorktreeEntry[] = [];
  for (const field of output.split('\0')) {
    if (field.startsWith('worktree ')) entries.push({ path: field.slice('worktree '.length), branch: null });
    else if (field.startsWith('branch ') && entries.length > 0) {
      entries[entries.length - 1]!.branch = field.slice('branch '.length);
    }
  }
  return entries;
}

/** A `--repo` run: its linked worktree and its branch go; the user's checkout and other branches stay. */
async function discardWorktreeRun(place: DiscardRunTarget['place']): Promise<DiscardRunResult> {
  const branch = place.branch;
  if (!branch.startsWith(RUN_BRANCH_PREFIX)) {
    throw new UserInputError(`refusing to delete branch ${branch}: not a branch aca made`);
  }
  if (!fs.existsSync(path.join(place.commonDir, 'HEAD'))) {
    throw new UserInputError(`the run's repository (${place.commonDir}) is gone`);
  }
  const common: GitTarget = { gitDir: place.commonDir };
  const worktrees = await listWorktrees(common);
  const runTree = realPath(place.workTree);
  const elsewhere = worktrees.find(
    (w) => w.branch === `refs/heads/${branch}` && realPath(w.path) !== runTree,
  );
  if (elsewhere) {
    throw new UserInputError(
      `branch ${branch} is checked out in ${elsewhere.path}; switch that checkout to another branch first`,
    );
  }
  // The main worktree (first) is the user's and never removed, whatever the snapshot says.
  const registered = worktrees.slice(1).some((w) => realPath(w.path) === runTree);
  let workTree: string | null = null;
  if (registered) {
    await withWorktreeLock(place.commonDir, () =>
      git(common, ['worktree', 'remove', '--force', '--force', place.workTree]).catch(async () => {
        // Code under test may have wrecked the `.git` file git validates; the registration is what
        // says the folder is the run's, so it can go anyway.
        fs.rmSync(place.workTree, { recursive: true, force: true });
        await git(common, ['worktree', 'prune']);
      }),
    );
    workTree = place.workTree;
  }
  let deleted: string | null = null;
  const exists = await git(common, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
    allowExitCodes: [1],
  });
  if (exists.trim()) {
    await git(common, ['branch', '--quiet', '-D', branch]);
    deleted = branch;
  }
  return { workTree, branch: deleted, gitDir: null };
}

/** A run without `--repo`: its workspace and the git directory it alone used both go. */
function discardOwnRepositoryRun(place: DiscardRunTarget['place']): DiscardRunResult {
  if (realPath(place.gitDir) !== realPath(place.commonDir)) {
    throw new UserInputError(
      `the run's git directory ${place.gitDir} is shared with ${place.commonDir}; not removing it`,
    );
  }
  refuseSweepingRemoval(place.workTree);
  refuseSweepingRemoval(place.gitDir);
  let gitDir: string | null = null;
  if (fs.existsSync(place.gitDir)) {
    if (!fs.existsSync(path.join(place.gitDir, 'HEAD'))) {
      throw new UserInputError(`${place.gitDir} is not a git directory; not removing it`);
    }
    fs.rmSync(place.gitDir, { recursive: true, force: true });
    gitDir = place.gitDir;
  }
  let workTree: string | null = null;
  if (fs.existsSync(place.workTree)) {
    fs.rmSync(place.workTree, { recursive: true, force: true });
    workTree = place.workTree;
  }
  return { workTree, branch: null, gitDir };
}

/**
 * Removes what a run left: for a `--repo` run its worktree and branch (the user's checkout,
 * index and other branches untouched), for a run without `--repo` its workspace folder and its
 * own git directory. Whatever is gone already is skipped, so discarding twice is harmless.
 * The caller checks that the run has ended.
 */
export async function discardRun(run: DiscardRunTarget): Promise<DiscardRunResult> {
  return run.repo !== null ? discardWorktreeRun(run.place) : discardOwnRepositoryRun(run.place);
}
