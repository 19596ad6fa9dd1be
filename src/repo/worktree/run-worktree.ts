import * as fs from 'node:fs';
import * as path from 'node:path';
import { withFileLock } from '../../shared/file-lock';
import { readRegularFile } from '../../shared/regular-file';
import { checkCommitSize } from './commit-size';
import { listFiles } from '../review/apply-errors';
import type { RunPlace } from '../../shared/run-types';
import { discoverRepository, git, GitError, gitWithStatus, type GitTarget } from '../git/git';
import { NEVER_COMMITTED_PATHSPECS } from './never-committed';
import { isUnaddableName } from '../git/unaddable-names';

/**
 * A run made as a linked worktree of the user's repository: its own git directory
 * `<commonDir>/worktrees/<name>`, the user's `.git` as the common one, on a branch of its own
 * started from `baseCommit`.
 */
export type RunWorktree = Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree' | 'branch'> & {
  baseCommit: string;
};

/** Bound of a linked worktree's `.git` file (`gitdir: <path>`) when it is read. */
export const MAX_POINTER_BYTES = 64 * 1024;

const worktreeChanges = new Map<string, Promise<unknown>>();

/** A worktree change is one git call (a removal may delete a large tree); past this, something is stuck. */
const WORKTREE_LOCK_WAIT_MS = 10 * 60_000;

/**
 * Runs `change` (adding or removing worktrees) after every earlier one for the same repository has
 * ended, in this process and in every other (workers sharing an ACA_HOME, or a `--repo`
 * repository). `git worktree add` reads every other worktree's entry, and one that another
 * `worktree add` is still writing reads as broken ("failed to read …/commondir"), failing the
 * add; `worktree prune` would delete such an entry. Runs of one repository prepared or cleaned up
 * at once (an eval batch) take turns here; checkouts and everything else run side by side. The
 * calls of this process queue here rather than each waiting on the file lock.
 */
export async function withWorktreeLock<T>(commonDir: string, change: () => Promise<T>): Promise<T> {
  const before = worktreeChanges.get(commonDir) ?? Promise.resolve();
  // The lock is the repository's git directory itself: every process that changes its worktrees
  // takes it, whatever its ACA_HOME, and no file of aca's is left in the user's repository.
  const locked = () => withFileLock(commonDir, change, WORKTREE_LOCK_WAIT_MS);
  const mine = before.then(locked, locked);
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  worktreeChanges.set(commonDir, settled);
  try {
    return await mine;
  } finally {
    if (worktreeChanges.get(commonDir) === settled) worktreeChanges.delete(commonDir);
  }
}

/**
 * Adds a worktree of the repository holding `repoDir` at `workTree`, on a new branch made from
 * `start` (a linked run's commit, in the same object store) or else `base`. The repository's
 * working tree, index, HEAD and other branches are not touched.
 */
export async function createRunWorktree(options: {
  repoDir: string;
  workTree: string;
  branch: string;
  base: string;
  start?: string;
}): Promise<RunWorktree> {
  const { commonDir } = await discoverRepository(options.repoDir);
  const common: GitTarget = { gitDir: commonDir };
  const commitOf = async (ref: string) =>
    (await git(common, ['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`])).trim();
  const baseCommit = await commitOf(options.base);
  const startCommit = options.start ? await commitOf(options.start) : baseCommit;
  await withWorktreeLock(commonDir, () =>
    git(common, ['worktree', 'add', '--no-checkout', '-b', options.branch, options.workTree, startCommit]),
  );
  // Read once, now, before any code has run in the work tree; never again afterwards.
  const pointer =
    readRegularFile(path.join(options.workTree, '.git'), { maxBytes: MAX_POINTER_BYTES })?.toString('utf8') ??
    '';
  const gitDir = /^gitdir: (.+)$/m.exec(pointer)?.[1]?.trim();
  if (!gitDir || path.dirname(path.resolve(gitDir)) !== path.join(commonDir, 'worktrees')) {
    throw new Error(`git made an unexpected worktree pointer in ${options.workTree}: ${pointer.trim()}`);
  }
  const worktree: RunWorktree = {
    commonDir,
    gitDir: path.resolve(gitDir),
    workTree: options.workTree,
    branch: options.branch,
    baseCommit,
  };
  await git(worktree, ['checkout', '--quiet', '--force', options.branch]);
  return worktree;
}

/**
 * Walks the work tree's real folders, never through a link and never into the top `.git`:
 * `visit` gets each folder (relative to the top, '' for the top) with its entries and says
 * whether to go into its subfolders.
 */
function walkWorkTree(
  workTree: string,
  visit: (relative: string, entries: fs.Dirent[]) => boolean,
  limit: number,
): void {
  const pending = [''];
  let seen = 0;
  while (pending.length > 0) {
    const relative = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(workTree, relative), { withFileTypes: true });
    } catch {
      continue;
    }
    seen += entries.length;
    if (seen > limit) throw new Error(`the work tree holds more than ${limit} entries`);
    if (!visit(relative, entries)) continue;
    for (const entry of entries) {
      if (entry.isDirectory() && !(relative === '' && entry.name === '.git')) {
        pending.push(relative ? `${relative}/${entry.name}` : entry.name);
      }
    }
  }
}

/**
 * Folders below the top of the work tree that hold a `.git` of their own. Model-written code can
 * make them; git would record them as submodules (or refuse them), so commits leave them out.
 */
export function nestedRepositories(workTree: string, limit = 200_000): string[] {
  const found: string[] = [];
  walkWorkTree(
    workTree,
    (relative, entries) => {
      if (relative === '' || !entries.some((e) => e.name === '.git')) return true;
      found.push(relative);
      return false;
    },
    limit,
  );
  return found.sort();
}

/** What commits leave out of the work tree (see clearForCommit). */
export interface CommitExclusions {
  /** Entries whose names git refuses to add (unaddable-names.ts), which would fail every commit. */
  unaddable: string[];
  /**
   * Those and the folders below the top that hold a `.git` of their own (as nestedRepositories),
   * as the bytes of their paths: a name that is not UTF-8 reads as U+FFFD in a string, which would
   * name nothing (or, as a pattern, everything).
   */
  paths: Buffer[];
}

const SLASH = Buffer.from('/');
const NUL = Buffer.from([0]);

/**
 * Readies the work tree for `git add` in one walk, since a walk holds the worker's event loop
 * (15-20 ms for 20,000 files on two cores) and every commit needs it: removes what removeSpecialFiles
 * removes, and finds what commits leave out. Neither a nested repository nor an unaddable entry
 * is looked into for exclusions; special files are removed everywhere. Names are walked as bytes
 * (see removeSpecialFiles): the paths left out are given as bytes too, and decoded (U+FFFD for
 * bytes that are not UTF-8) only for messages.
 */
export function clearForCommit(workTree: string, limit = 200_000): CommitExclusions {
  const nested: Buffer[] = [];
  const unaddable: Array<[string, Buffer]> = [];
  const top = Buffer.from(workTree);
  const pending: Array<{ full: Buffer; bytes: Buffer; relative: string; excluded: boolean }> = [
    { full: top, bytes: Buffer.alloc(0), relative: '', excluded: false },
  ];
  let seen = 0;
  while (pending.length > 0) {
    const folder = pending.pop()!;
    let entries: fs.Dirent<Buffer>[];
    try {
      entries = fs.readdirSync(folder.full, { withFileTypes: true, encoding: 'buffer' });
    } catch {
      continue;
    }
    seen += entries.length;
    if (seen > limit) throw new Error(`the work tree holds more than ${limit} entries`);
    const atTop = folder.full === top;
    let excluded = folder.excluded;
    // A `.git` that is a FIFO, socket or device is removed below, as before any other look.
    const isGitEntry = (e: fs.Dirent<Buffer>) =>
      e.name.toString('latin1') === '.git' && (e.isDirectory() || e.isFile() || e.isSymbolicLink());
    if (!excluded && !atTop && entries.some(isGitEntry)) {
      nested.push(folder.bytes);
      excluded = true;
    }
    const fullOf = (entry: fs.Dirent<Buffer>) => Buffer.concat([folder.full, SLASH, entry.name]);
    for (const entry of entries) {
      const isDirectory = entry.isDirectory();
      if (!isDirectory && !entry.isFile() && !entry.isSymbolicLink()) {
        fs.rmSync(fullOf(entry), { force: true });
        continue;
      }
      const isTopGit = atTop && entry.name.toString('latin1') === '.git';
      if (isTopGit || (excluded && !isDirectory)) continue;
      const name = entry.name.toString('utf8');
      const relative = folder.relative ? `${folder.relative}/${name}` : name;
      const bytes = atTop ? entry.name : Buffer.concat([folder.bytes, SLASH, entry.name]);
      let entryExcluded = excluded;
      if (!excluded && isUnaddableName(name, entry.isSymbolicLink())) {
        unaddable.push([relative, bytes]);
        entryExcluded = true;
      }
      if (isDirectory) pending.push({ full: fullOf(entry), bytes, relative, excluded: entryExcluded });
    }
  }
  return {
    unaddable: unaddable.map(([name]) => name).sort(),
    paths: [...nested, ...unaddable.map(([, bytes]) => bytes)],
  };
}

/** A path as an exclude pathspec, byte for byte (for `--pathspec-from-file`). */
function excludeLiteral(path: Buffer): Buffer {
  return Buffer.concat([Buffer.from(':(exclude,literal)'), path]);
}

/** Whether the bytes are UTF-8 and so survive being passed as a string argument. */
function isUtf8(bytes: Buffer): boolean {
  return Buffer.from(bytes.toString('utf8')).equals(bytes);
}

/**
 * FIFOs, sockets and device files below the work tree, nested repositories included. git opens
 * `.gitignore` and `.gitattributes` without O_NONBLOCK, so a FIFO under either name hangs every
 * git call that reads the tree (add, status, clean) for good, holding the index lock; a tracked
 * file turned into one makes `git add` fail. git cannot record them anyway: callers remove them
 * before git looks at the tree.
 */
export function specialFiles(workTree: string, limit = 200_000): string[] {
  const found: string[] = [];
  walkWorkTree(
    workTree,
    (relative, entries) => {
      for (const entry of entries) {
        if (!entry.isDirectory() && !entry.isFile() && !entry.isSymbolicLink()) {
          found.push(relative ? `${relative}/${entry.name}` : entry.name);
        }
      }
      return true;
    },
    limit,
  );
  return found.sort();
}

/**
 * Removes what specialFiles finds: unlinking a FIFO or socket never opens it. Names are walked as
 * bytes: a folder whose name is not valid UTF-8 would come back as a string naming nothing, and
 * a FIFO `.gitignore` in it would stay to hang git. The walk is clearForCommit's.
 */
export function removeSpecialFiles(workTree: string, limit = 200_000): void {
  clearForCommit(workTree, limit);
}

/** Commits everything in the work tree that differs from the branch; the commit id, or null if nothing changed. */
export async function commitAll(
  place: Pick<RunPlace, 'gitDir' | 'commonDir' | 'workTree'>,
  message: string,
  author?: { name: string; email: string },
  /** Only these paths (relative to the work tree), e.g. the file a tool call wrote; default: all. */
  paths?: string[],
  /** Told what the commit leaves out that the step's own code may have meant to keep. */
  warn: (message: string) => void = () => undefined,
): Promise<string | null> {
  const { unaddable, paths: leftOut } = clearForCommit(place.workTree);
  if (unaddable.length > 0) {
    warn(
      `left out of the commit: ${listFiles(unaddable)} (names git refuses to add, as they would read as .git on some file systems)`,
    );
  }
  // `git add` takes its pathspecs as bytes, on stdin; `ls-files` takes arguments only, so there a
  // path that is not UTF-8 stays in: the listing names what may be added, and more is safe.
  const excluded = [
    ...leftOut.filter(isUtf8).map((p) => `:(exclude,literal)${p.toString('utf8')}`),
    ...NEVER_COMMITTED_PATHSPECS,
  ];
  let included = paths ? paths.map((p) => `:(literal)${p}`) : ['.'];
  if (paths) {
    // `git add` fails outright on a named path it cannot take (ignored, in a submodule, gone and
    // never tracked), and a tool call's commit failing on every retry would fail the run: only
    // what git would take from a commit of the whole tree is named, file by file.
    included = (
      await git(place, [
        'ls-files',
        '-z',
        '--cached',
        '--others',
        '--exclude-standard',
        '--',
        ...included,
        ...excluded,
      ])
    )
      .split('\0')
      .filter(Boolean)
      .map((file) => `:(literal)${file}`);
    if (included.length === 0) return null;
  }
  await checkCommitSize(place, [...included, ...excluded]);
  const addSpecs = [
    ...included.map((spec) => Buffer.from(spec)),
    ...NEVER_COMMITTED_PATHSPECS.map((spec) => Buffer.from(spec)),
    ...leftOut.map(excludeLiteral),
  ];
  await git(place, ['add', '--all', '--pathspec-from-file=-', '--pathspec-file-nul'], {
    input: Buffer.concat(addSpecs.flatMap((spec) => [spec, NUL])),
  });
  // A model's summary in the message may hold NUL, which no argument can carry: the commit would
  // fail on every retry.
  const text = message.replace(/\0/g, '');
  // Committing straight away saves asking first whether anything is staged: git refuses with
  // status 1 when nothing is, which only then is checked (a status 1 for any other reason fails).
  const committed = await gitWithStatus(
    place,
    ['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-m', text],
    { ...(author ? { author } : {}), allowExitCodes: [1] },
  );
  if (committed.code === 1) {
    const staged = await gitWithStatus(place, ['diff', '--cached', '--quiet', '--ignore-submodules=all'], {
      allowExitCodes: [1],
    });
    if (staged.code === 0) return null;
    throw new GitError(['commit'], committed.code, `${committed.stdout}${committed.stderr}`.trim());
  }
  return looseHead(place) ?? (await git(place, ['rev-parse', 'HEAD'])).trim();
}

/**
 * The commit HEAD names, read from the git directory's files when HEAD is a branch with a loose
 * ref (as right after a commit on it): every file tool call of a run with a git store commits,
 * and a git process costs more than two small reads. Null where git has to say (a packed ref).
 */
export function looseHead(place: Pick<RunPlace, 'gitDir' | 'commonDir'>): string | null {
  try {
    const head = /^ref: (refs\/heads\/[^\s]+)\n?$/.exec(
      fs.readFileSync(path.join(place.gitDir, 'HEAD'), 'utf8'),
    );
    if (!head || head[1]!.split('/').includes('..')) return null;
    const commit = fs.readFileSync(path.join(place.commonDir, head[1]!), 'utf8').trim();
    return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit) ? commit : null;
  } catch {
    return null;
  }
}

/** The diff between two commits of the run, as text, or as a `--stat` summary. */
export async function diffCommits(
  place: Pick<RunPlace, 'gitDir'>,
  from: string,
  to: string,
  stat = false,
): Promise<string> {
  return git({ gitDir: place.gitDir }, [
    'diff',
    '--no-ext-diff',
    '--no-textconv',
    '--ignore-submodules=all',
    ...(stat ? ['--stat'] : []),
    from,
    to,
    '--',
  ]);
}

/** Removes the worktree and its branch; the repository is as it was before the run. */
export async function removeRunWorktree(
  worktree: Pick<RunWorktree, 'commonDir' | 'workTree' | 'branch'>,
): Promise<void> {
  const common: GitTarget = { gitDir: worktree.commonDir };
  await withWorktreeLock(worktree.commonDir, () =>
    git(common, ['worktree', 'remove', '--force', '--force', worktree.workTree]).catch(async () => {
      fs.rmSync(worktree.workTree, { recursive: true, force: true });
      await git(common, ['worktree', 'prune']);
    }),
  );
  await git(common, ['branch', '-D', worktree.branch]);
}
