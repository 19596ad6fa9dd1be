import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';
import type { ChangedFile, RunPlace } from '../../shared/run-types';
import { discoverRepository, git, GitError, type GitTarget } from '../git/git';
import {
  NO_PROJECT_CONFIG,
  parseProjectConfig,
  PROJECT_CONFIG_FILE,
  type ProjectConfig,
} from '../config/project-config';
import { looseHead } from './run-worktree';

/** The branch a run's commits go on. */
export function runBranch(workflowId: string): string {
  return `aca/${workflowId}`;
}

/** A `--repo` folder as the request sees it: the repository, the base commit, what is left out. */
export interface ResolvedRepository {
  topLevel: string;
  commonDir: string;
  baseCommit: string;
  /** One line when tracked files have uncommitted changes, which the run does not see. */
  uncommittedWarning: string | null;
  /** One line when `.aca.json` is untracked or changed: the run reads the committed one only. */
  configWarning: string | null;
  config: ProjectConfig;
}

/**
 * Checks `--repo DIR` and `--base REF` before anything starts, reading only: DIR must lie in a
 * git work tree with at least one commit, REF must name a commit, `.aca.json` at that commit (if
 * any) must be valid. Git's optional locks are off, so not even the index is refreshed.
 */
export async function resolveRepository(dir: string, base: string): Promise<ResolvedRepository> {
  const absolute = path.resolve(dir);
  if (!fs.existsSync(absolute) || !fs.statSync(absolute).isDirectory()) {
    throw new UserInputError(`--repo ${absolute} is not a folder`);
  }
  let found;
  try {
    found = await discoverRepository(absolute);
  } catch {
    throw new UserInputError(
      `--repo ${absolute} is not in a git work tree (git init, or pick another folder)`,
    );
  }
  if (!found.topLevel) throw new UserInputError(`--repo ${absolute} is inside a bare repository`);
  const common: GitTarget = { gitDir: found.commonDir };
  const checkout: GitTarget = { gitDir: found.gitDir, workTree: found.topLevel };
  const head = await git(checkout, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], {
    allowExitCodes: [1],
  });
  if (head.trim() === '') {
    throw new UserInputError(`the repository at ${found.topLevel} has no commit yet; commit something first`);
  }
  if (base.trim() === '' || base.startsWith('-'))
    throw new UserInputError(`--base "${base}" is not a revision`);
  const resolved = await git(
    base === 'HEAD' ? checkout : common,
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${base}^{commit}`],
    { allowExitCodes: [1] },
  );
  if (resolved.trim() === '') {
    throw new UserInputError(`--base ${base} names no commit in the repository at ${found.topLevel}`);
  }
  const baseCommit = resolved.trim();
  const status = await git(checkout, [
    'status',
    '--porcelain',
    '--untracked-files=no',
    '--ignore-submodules=all',
  ]);
  const dirty = status.split('\n').filter(Boolean).length;
  const configStatus = await git(checkout, [
    'status',
    '--porcelain',
    '--untracked-files=all',
    '--ignore-submodules=all',
    '--',
    PROJECT_CONFIG_FILE,
  ]);
  return {
    topLevel: found.topLevel,
    commonDir: found.commonDir,
    baseCommit,
    uncommittedWarning:
      dirty > 0
        ? `warning: ${dirty} tracked file(s) in ${found.topLevel} have uncommitted changes; the run starts from ${base === 'HEAD' ? 'the last commit' : base} without them`
        : null,
    configWarning: configStatus.trim()
      ? `warning: ${PROJECT_CONFIG_FILE} in ${found.topLevel} has changes that are not committed; the run reads it as committed${base === 'HEAD' ? '' : ` at ${base}`} (commit it for them to count)`
      : null,
    config: await readProjectConfigAt(common, baseCommit, found.topLevel),
  };
}

/** `.aca.json` as committed at `commit`; the defaults when there is none. */
export async function readProjectConfigAt(
  target: GitTarget,
  commit: string,
  topLevel: string,
): Promise<ProjectConfig> {
  const spec = `${commit}:${PROJECT_CONFIG_FILE}`;
  const kind = (await git(target, ['cat-file', '-t', spec], { allowExitCodes: [128] })).trim();
  if (kind === '') return NO_PROJECT_CONFIG;
  const source = path.join(topLevel, PROJECT_CONFIG_FILE);
  if (kind !== 'blob') throw new UserInputError(`${source} is not a file`);
  return parseProjectConfig(await git(target, ['cat-file', 'blob', spec]), source);
}

/** Whether `branch` is a name git accepts for a branch. */
export async function isValidBranchName(branch: string): Promise<boolean> {
  try {
    await git({ gitDir: '/nonexistent' }, ['check-ref-format', '--branch', branch]);
    return true;
  } catch (err) {
    if (err instanceof GitError) return false;
    throw err;
  }
}

/** The git directories and work tree of a run's repository as it is made, before its place is known. */
type RunDirs = Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree'>;

/** A linked run's start: a commit of the earlier run, whose history holds the base. */
interface EarlierRunStart {
  commit: string;
  baseCommit: string;
  /** The earlier run's place, or the part of it that holds its commits. */
  parentPlace: Pick<RunPlace, 'commonDir'>;
  /** Fetches the earlier run's branch into a git directory (from the git store), when this host never held it. */
  fetch?: (gitDir: string) => Promise<void>;
}

/**
 * A repository of the run's own for a run without `--repo`: its git directory outside the
 * workspace (code under test never reaches it), the branch starting at an empty commit, so the
 * run has a base, commits and a diff like any other. Idempotent: a retry finds it made.
 */
export async function createFreshRunRepository(options: {
  gitDir: string;
  workTree: string;
  branch: string;
  /**
   * A linked run: its branch starts at `commit`, fetched with its history from the earlier run's
   * git directory, or by `fetch` (from the git store, on a host that never held that run).
   */
  from?: EarlierRunStart;
}): Promise<RunDirs & { baseCommit: string }> {
  const target: GitTarget = { gitDir: options.gitDir, workTree: options.workTree };
  const dirs: RunDirs = { gitDir: options.gitDir, commonDir: options.gitDir, workTree: options.workTree };
  fs.mkdirSync(options.workTree, { recursive: true });
  const ref = `refs/heads/${options.branch}`;
  if (fs.existsSync(path.join(options.gitDir, 'HEAD'))) {
    const existing = await git(target, ['rev-list', '--max-parents=0', '--end-of-options', ref], {
      allowExitCodes: [128],
    });
    const baseCommit = existing.trim().split('\n')[0];
    if (baseCommit) return { ...dirs, baseCommit };
  }
  fs.mkdirSync(path.dirname(options.gitDir), { recursive: true, mode: 0o700 });
  // Without git's template (sample hooks, which never run here: core.hooksPath is pinned) init
  // takes half the time.
  await git({ gitDir: options.gitDir }, [
    'init',
    '--quiet',
    '--template=',
    `--initial-branch=${options.branch}`,
  ]);
  if (options.from) return startFromEarlierRun(target, dirs, ref, options.from);
  // The new repository has no index yet: its first commit holds the empty tree, on the branch
  // HEAD names.
  await git(target, [
    'commit',
    '--allow-empty',
    '--quiet',
    '--no-verify',
    '--no-gpg-sign',
    '-m',
    'aca: empty base of a run without --repo',
  ]);
  const baseCommit = looseHead(dirs) ?? (await git(target, ['rev-parse', '--verify', ref])).trim();
  return { ...dirs, baseCommit };
}

/**
 * Fetches the earlier run's branch (its git directory is aca's own, outside any workspace) and
 * starts this run's branch at the given commit of it, with the files of that commit checked out.
 */
async function startFromEarlierRun(
  target: GitTarget,
  dirs: RunDirs,
  ref: string,
  from: EarlierRunStart,
): Promise<RunDirs & { baseCommit: string }> {
  if (from.fetch) await from.fetch(dirs.commonDir);
  else
    await git(target, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--end-of-options',
      from.parentPlace.commonDir,
      `+refs/heads/*:refs/earlier-runs/*`,
    ]);
  for (const commit of [from.commit, from.baseCommit]) {
    await git(target, ['cat-file', '-e', '--end-of-options', `${commit}^{commit}`]).catch(() => {
      throw new UserInputError(`commit ${commit} of the earlier run is not in ${from.parentPlace.commonDir}`);
    });
  }
  await git(target, ['update-ref', ref, from.commit]);
  // The index and the work tree to that commit; also right for an empty tree (a fork at attempt 1).
  await git(target, ['read-tree', '--reset', '-u', from.commit]);
  return { ...dirs, baseCommit: from.baseCommit };
}

/** Files changed between two commits, with their line counts (binary files count 0). */
export async function changedFilesBetween(
  place: Pick<RunPlace, 'commonDir'>,
  from: string,
  to: string,
  limit = 1000,
): Promise<ChangedFile[]> {
  const target: GitTarget = { gitDir: place.commonDir };
  // One process for both: -z --raw gives ":<modes> <ids> <status>\0<path>\0" per file, then
  // --numstat "<added>\t<removed>\t<path>\0" per file. A path always follows its raw line, so a
  // path that looks like either form is read as the path it is.
  const text = await git(target, [
    'diff',
    '--no-ext-diff',
    '--no-textconv',
    '--no-renames',
    // A submodule commit the run records is a change apply brings in: listed (one line).
    '--ignore-submodules=none',
    '-z',
    '--raw',
    '--numstat',
    from,
    to,
    '--',
  ]);
  const statuses = new Map<string, ChangedFile['status']>();
  const files: ChangedFile[] = [];
  let rawStatus: string | null = null;
  for (const token of text.split('\0')) {
    if (rawStatus !== null) {
      statuses.set(token, rawStatus === 'A' ? 'added' : rawStatus === 'D' ? 'deleted' : 'modified');
      rawStatus = null;
      continue;
    }
    const raw = /^:\d+ \d+ [0-9a-f]+ [0-9a-f]+ ([A-Z])\d*$/.exec(token);
    if (raw) {
      rawStatus = raw[1]!;
      continue;
    }
    // Every raw line comes before the first count, so each file's status is known by now.
    const count = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(token);
    if (!count) continue;
    const file = count[3]!;
    files.push({
      path: file,
      status: statuses.get(file) ?? 'modified',
      added: count[1] === '-' ? 0 : Number(count[1]),
      removed: count[2] === '-' ? 0 : Number(count[2]),
    });
    if (files.length >= limit) break;
  }
  return files;
}

/** The top of the git work tree holding `dir`, or null when `dir` is in none (or in a bare repository). */
export async function enclosingWorkTree(dir: string): Promise<string | null> {
  try {
    const found = await discoverRepository(path.resolve(dir));
    return found.topLevel || null;
  } catch {
    return null;
  }
}
