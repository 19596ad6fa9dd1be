/**
 * Where a run's work tree is on this worker, when workers do not share a disk.
 *
 * The workflow names a run's work tree by a `RunPlace`: the branch, the last commit it recorded,
 * and the paths on the disk where the run was prepared. Without a configured git store every
 * worker shares that disk, and the paths are used as they are. With one, a worker uses those
 * paths only on that same disk (same disk id), and otherwise a copy of its own under
 * `$ACA_HOME/hosted/`. Before a step it checks a marker (outside any workspace, so code under
 * test cannot forge it) that says which commit this worker last left the copy at; when that is
 * not the recorded commit, the copy is rebuilt at the recorded commit from the store.
 *
 * A step that changes files ends with a commit pushed to the store (see `commit`); only then is
 * the commit returned to the workflow, so a recorded commit is always in the store.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunGit, RunPlace } from '../shared/run-types';
import { safeKey } from '../shared/safe-key';
import { git, gitBytes, gitWithStatus } from './git';
import type { GitStoreLocation } from './git-store-location';
import { bringToCommit, fetchStoreBranch, pushRunCommit, storeBranchTip } from './git-store';
import { GitStorePushRejectedError } from './git-store-errors';
import { isCommit } from './objects';
import { commitAll } from './run-worktree';
import { makeFoldersWritable } from './work-tree-reset';

/** A run's work tree and git directory on this worker. */
export interface LocalRun {
  workspace: string;
  git: RunGit;
  /** The copy was (re)built from the store for this step: ignored files (installs) are not in it. */
  rebuilt: boolean;
}

export interface RunPlacesOptions {
  /** The store every worker reaches; null: every worker shares the runs' disk (one host). */
  store: GitStoreLocation | null;
  /** This worker's ACA_HOME: its disk id, the markers and the copies of runs prepared elsewhere. */
  home: string;
  author: { name: string; email: string };
  /** Each push of a step's commit gives up after this long (the store counts as unreachable). */
  pushTimeoutMs?: number;
}

/** The trailer that ties a commit to the step that made it, so a retry can recognise its own push. */
const STEP_TRAILER = 'Aca-Step';

/** A copy no step has used for this long belongs to a run that has ended. */
export const UNUSED_COPY_MS = 3 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;

export class RunPlaces {
  private diskId: string | null = null;
  private lastPrune = 0;
  /** Steps of one run on this worker take turns at its work tree. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly options: RunPlacesOptions) {}

  /** Whether steps push their commits (a store is configured) and copies may be rebuilt. */
  get usesStore(): boolean {
    return this.options.store !== null;
  }

  /**
   * This disk's id: made once per ACA_HOME, so workers sharing a home (one host) share it and
   * workers on other hosts (or with another home) do not.
   */
  disk(): string {
    if (this.diskId) return this.diskId;
    const file = path.join(this.options.home, 'disk-id');
    try {
      this.diskId = fs.readFileSync(file, 'utf8').trim();
    } catch {
      fs.mkdirSync(this.options.home, { recursive: true, mode: 0o700 });
      try {
        fs.writeFileSync(file, `${crypto.randomBytes(12).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      this.diskId = fs.readFileSync(file, 'utf8').trim();
    }
    if (!/^[0-9a-f]{8,64}$/.test(this.diskId)) throw new Error(`${file} does not hold a disk id`);
    return this.diskId;
  }

  /** The paths this worker uses for the run, whether or not they hold anything yet. */
  localPaths(place: RunPlace): { workspace: string; git: RunGit } {
    if (!this.usesStore || place.disk === this.disk()) {
      return { workspace: place.git.workTree, git: place.git };
    }
    const folder = this.hostedFolder(place.workflowId);
    const workTree = path.join(folder, 'work');
    const gitDir = path.join(folder, 'git');
    return { workspace: workTree, git: { gitDir, commonDir: gitDir, workTree } };
  }

  /**
   * The run's work tree on this worker at the recorded commit: as it is when this worker left it
   * there, else rebuilt from the store. A copy of this worker's own (under `hosted/`) last at a
   * commit that is neither in the recorded commit's history nor in the store's branch, or at no
   * known commit, is of another run that had the same id (`aca discard`, then `--id` again) or of
   * nothing aca knows: it is removed, ignored files, setup mark and all, before the rebuild, so
   * nothing an earlier run's code under test left reaches this run. Steps of one run take turns
   * (see `exclusive`).
   */
  async open(place: RunPlace): Promise<LocalRun> {
    const local = this.localPaths(place);
    if (!this.usesStore) return { ...local, rebuilt: false };
    const marker = this.marker(place);
    if (marker?.commit === place.commit && fs.existsSync(local.workspace)) {
      // The marker's time says when the copy was last used (see pruneUnusedCopies).
      const now = new Date();
      fs.utimesSync(this.markerFile(place), now, now);
      return { ...local, rebuilt: false };
    }
    this.unmark(place);
    this.pruneUnusedCopies();
    const known = marker?.commit ?? marker?.last ?? null;
    if (place.disk !== this.disk() && fs.existsSync(this.hostedFolder(place.workflowId))) {
      if (known === null || !(await this.copyDescendsTo(local.git.commonDir, place, known))) {
        this.removeCopy(place);
      }
    }
    const brought = await bringToCommit(this.options.store!, {
      workTree: local.workspace,
      gitDir: local.git.gitDir,
      branch: place.branch,
      commit: place.commit,
    });
    this.mark(place, place.commit);
    return { workspace: local.workspace, git: brought.git, rebuilt: brought.changed };
  }

  /**
   * Whether `known`, where this worker last had the copy, is in this run's history: the recorded
   * commit or an ancestor of it, or (a step retried after its first try pushed from this copy)
   * in the store's branch. A run with the same id before it (its branch discarded, this one pushed
   * anew) has commits in neither.
   */
  private async copyDescendsTo(gitDir: string, place: RunPlace, known: string): Promise<boolean> {
    if (!fs.existsSync(path.join(gitDir, 'HEAD'))) return false;
    const store = this.options.store!;
    const target = { gitDir };
    const has = (commit: string) => isCommit(target, commit);
    const isAncestor = async (of: string) =>
      (
        await gitWithStatus(target, ['merge-base', '--is-ancestor', '--end-of-options', known, of], {
          allowExitCodes: [1, 128],
        })
      ).code === 0;
    if (!(await has(place.commit))) await fetchStoreBranch(store, gitDir, place.branch);
    if (await isAncestor(place.commit)) return true;
    const tip = await storeBranchTip(store, gitDir, place.branch);
    if (tip === null) return false;
    if (!(await has(tip))) await fetchStoreBranch(store, gitDir, place.branch);
    return isAncestor(tip);
  }

  /** This worker's copy of a run prepared elsewhere, and its setup mark, gone. */
  private removeCopy(place: RunPlace): void {
    removeHostedFolder(this.hostedFolder(place.workflowId));
    fs.rmSync(`${this.markerFile(place)}.setup`, { force: true });
  }

  /** Runs `work` while no other step of the same run runs on this worker. */
  async exclusive<T>(place: RunPlace, work: () => Promise<T>): Promise<T> {
    const key = runFolderName(place.workflowId);
    const before = this.queues.get(key) ?? Promise.resolve();
    const turn = before.catch(() => undefined).then(work);
    const settled = turn.catch(() => undefined);
    this.queues.set(key, settled);
    try {
      return await turn;
    } finally {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    }
  }

  /**
   * Says the copy is no longer at any known commit: call it before a step changes files, so that
   * a step that dies half-way leaves a copy the next step rebuilds.
   */
  unmark(place: RunPlace): void {
    if (!this.usesStore) return;
    // The commit it was last at stays known: a later step finds out whether the copy is this run's.
    const marker = this.marker(place);
    const last = marker?.commit ?? marker?.last ?? null;
    if (last === null) fs.rmSync(this.markerFile(place), { force: true });
    else this.writeMarker(place, { commit: null, last });
  }

  /**
   * Commits what the step changed (only `paths`, when given) on the run's branch and, with a
   * store, pushes it there, expecting the store at the recorded commit. A retry of a step whose
   * first try pushed and then died finds that push in the store (same parent, same step) and
   * takes it instead of refusing its own work.
   *
   * @returns the new commit, or null when nothing changed.
   */
  async commit(
    place: RunPlace,
    local: LocalRun,
    request: { message: string; step: string; paths?: string[]; warn?: (message: string) => void },
  ): Promise<string | null> {
    const message = this.usesStore
      ? `${request.message}\n\n${STEP_TRAILER}: ${request.step}`
      : request.message;
    this.unmark(place);
    const commit = await commitAll(
      { ...local.git, branch: place.branch, baseCommit: '' },
      message,
      this.options.author,
      request.paths,
      request.warn,
    );
    if (!this.usesStore) return commit;
    if (commit === null) {
      this.mark(place, place.commit);
      return null;
    }
    const store = this.options.store!;
    try {
      await pushRunCommit(store, local.git, place.branch, commit, place.commit, {
        ...(this.options.pushTimeoutMs ? { timeoutMs: this.options.pushTimeoutMs } : {}),
      });
    } catch (err) {
      const earlier =
        err instanceof GitStorePushRejectedError && err.actual
          ? await this.earlierTryOf(local.git, place.branch, err.actual, place.commit, request.step)
          : false;
      if (!earlier) throw err;
      const adopted = err instanceof GitStorePushRejectedError ? err.actual! : commit;
      await bringToCommit(store, {
        workTree: local.workspace,
        gitDir: local.git.gitDir,
        branch: place.branch,
        commit: adopted,
      });
      this.mark(place, adopted);
      return adopted;
    }
    this.mark(place, commit);
    return commit;
  }

  /** Whether `commit` (the store's tip) is this step's own, pushed by an earlier try on top of `parent`. */
  private async earlierTryOf(
    runGit: RunGit,
    branch: string,
    commit: string,
    parent: string,
    step: string,
  ): Promise<boolean> {
    const target = { gitDir: runGit.commonDir };
    // The store's tip may be a commit this worker has never seen.
    await git(target, ['cat-file', '-e', '--end-of-options', `${commit}^{commit}`]).catch(() =>
      fetchStoreBranch(this.options.store!, runGit.commonDir, branch),
    );
    const parents = await git(target, ['rev-list', '--parents', '-n', '1', '--end-of-options', commit], {
      allowExitCodes: [128],
    });
    if (parents.trim().split(' ').slice(1).join(' ') !== parent) return false;
    const body = await git(target, ['log', '-1', '--format=%(trailers:key=Aca-Step,valueonly)', commit]);
    return body.trim() === step;
  }

  /** Records that the run's setup command ran in this worker's copy. */
  markSetUp(place: RunPlace): void {
    if (!this.usesStore) return;
    const file = `${this.markerFile(place)}.setup`;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, this.localPaths(place).workspace, { mode: 0o600 });
  }

  /** Whether the setup command ran in this worker's copy (always, when every worker shares the disk). */
  isSetUp(place: RunPlace): boolean {
    if (!this.usesStore) return true;
    try {
      return fs.readFileSync(`${this.markerFile(place)}.setup`, 'utf8') === this.localPaths(place).workspace;
    } catch {
      return false;
    }
  }

  /**
   * The folder of the `--tests` originals the sandbox mounts over the workspace copies: the
   * folder given, where this worker sees it (on the disk the run was prepared on: a folder at the
   * same path on another host is not the user's); else the files as `commit` (the one that added
   * them to the branch) has them, written once into a folder of this worker's that no test reaches.
   */
  async acceptanceOriginals(
    place: RunPlace,
    local: LocalRun,
    testsDir: string,
    commit: string | null,
    files: string[],
  ): Promise<string> {
    if (!this.usesStore || commit === null) return testsDir;
    if (place.disk === this.disk() && fs.existsSync(testsDir)) return testsDir;
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit)) throw new Error(`"${commit}" is not a full commit id`);
    for (const file of files) {
      // The names come from a listing of the user's folder; a name that leaves it is never written.
      const parts = file.split('/');
      if (file === '' || parts.some((part) => part === '' || part === '.' || part === '..')) {
        throw new Error(`"${file}" is not a path inside the --tests folder`);
      }
    }
    const folder = path.join(this.hostedFolder(place.workflowId), `acceptance-${commit}`);
    if (fs.existsSync(folder)) return folder;
    // A name no other worker of this ACA_HOME uses (workers in containers may share a pid).
    const temporary = `${folder}.new-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
    try {
      for (const file of files) {
        const blob = await gitBytes({ gitDir: local.git.commonDir }, [
          'cat-file',
          'blob',
          `${commit}:${file}`,
        ]);
        const target = path.join(temporary, file);
        fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
        const fd = fs.openSync(
          target,
          fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
          0o444,
        );
        try {
          fs.writeFileSync(fd, blob);
        } finally {
          fs.closeSync(fd);
        }
      }
      try {
        fs.renameSync(temporary, folder);
      } catch (err) {
        // Another worker of this ACA_HOME wrote the same files first.
        const code = (err as NodeJS.ErrnoException).code;
        if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !fs.existsSync(folder)) throw err;
      }
    } finally {
      fs.rmSync(temporary, { recursive: true, force: true });
    }
    return folder;
  }

  /**
   * Removes copies of runs prepared elsewhere that no step has used for UNUSED_COPY_MS: the run
   * has ended (or moved on for good), and the store has everything the copy held. Runs at most
   * once an hour, when a copy is (re)built.
   */
  pruneUnusedCopies(now = Date.now()): string[] {
    if (now - this.lastPrune < PRUNE_EVERY_MS) return [];
    this.lastPrune = now;
    const hosted = path.join(this.options.home, 'hosted');
    const removed: string[] = [];
    let names: string[];
    try {
      names = fs.readdirSync(hosted);
    } catch {
      return removed;
    }
    for (const name of names) {
      const marker = path.join(this.options.home, 'run-marks', `${name}.json`);
      const folder = path.join(hosted, name);
      const used = [marker, folder].map((file) => {
        try {
          return fs.lstatSync(file).mtimeMs;
        } catch {
          return 0;
        }
      });
      if (now - Math.max(...used) < UNUSED_COPY_MS) continue;
      if (this.queues.has(name)) continue;
      try {
        removeHostedFolder(folder);
        fs.rmSync(marker, { force: true });
        fs.rmSync(`${marker}.setup`, { force: true });
        removed.push(name);
      } catch {
        // Not this step's business: what is left is tried again at the next pruning.
      }
    }
    return removed;
  }

  /** Removes this worker's copy of a run prepared elsewhere (not the run's own paths on its disk). */
  forget(place: RunPlace): void {
    if (!this.usesStore) return;
    fs.rmSync(this.markerFile(place), { force: true });
    if (place.disk !== this.disk()) {
      fs.rmSync(this.hostedFolder(place.workflowId), { recursive: true, force: true });
    }
  }

  /** Records that this worker left the run's copy at `commit`. */
  mark(place: RunPlace, commit: string): void {
    if (!this.usesStore) return;
    this.writeMarker(place, { commit, last: commit });
  }

  private writeMarker(place: RunPlace, at: { commit: string | null; last: string }): void {
    const file = this.markerFile(place);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const local = this.localPaths(place);
    fs.writeFileSync(`${file}.new`, JSON.stringify({ ...at, workTree: local.workspace }), { mode: 0o600 });
    fs.renameSync(`${file}.new`, file);
  }

  /**
   * The marker: the commit this worker left the copy at (null while a step may be changing it),
   * and the last commit it was known at; null when there is none for the copy at these paths.
   */
  private marker(place: RunPlace): { commit: string | null; last: string | null } | null {
    try {
      const marker = JSON.parse(fs.readFileSync(this.markerFile(place), 'utf8')) as {
        commit?: unknown;
        last?: unknown;
        workTree?: unknown;
      };
      if (marker.workTree !== this.localPaths(place).workspace) return null;
      const id = (value: unknown) =>
        typeof value === 'string' && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(value) ? value : null;
      return { commit: id(marker.commit), last: id(marker.last) };
    } catch {
      return null;
    }
  }

  private markerFile(place: RunPlace): string {
    return path.join(this.options.home, 'run-marks', `${runFolderName(place.workflowId)}.json`);
  }

  private hostedFolder(workflowId: string): string {
    return path.join(this.options.home, 'hosted', runFolderName(workflowId));
  }
}

/**
 * Removes a copy of a run under `hosted/`. Folders a test made unwritable (chmod 0555, as the
 * worker's own user when it is not root) would stop the removal: they are made writable first,
 * without following links.
 */
function removeHostedFolder(folder: string): void {
  const work = path.join(folder, 'work');
  if (fs.existsSync(work)) makeFoldersWritable(work);
  fs.rmSync(folder, { recursive: true, force: true });
}

/** One folder name per workflow id: readable, and unique even for ids that differ only in odd characters. */
export function runFolderName(workflowId: string): string {
  const digest = crypto.createHash('sha256').update(workflowId).digest('hex').slice(0, 12);
  return `${safeKey(workflowId).slice(0, 80)}-${digest}`;
}
