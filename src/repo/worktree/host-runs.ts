/**
 * The runs whose files are on this host. A run's files live on the host that prepared it (or
 * adopted it): every step that reads or writes them goes to that host's task queue, so no other
 * host ever needs them. A step starts from the
 * commit the workflow recorded; when the work tree's branch is anywhere else (a retried step, a
 * Temporal Reset), it is brought back there first.
 *
 * With a git store, a step that changes files pushes its commit there before the workflow records
 * it, so a recorded commit is always in the store, and another host can adopt the run from it
 * when this one is gone.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunPlace } from '../../shared/run-types';
import { hostQueuesOf, type HostQueues } from '../../shared/host-queues';
import { safeKey } from '../../shared/safe-key';
import { git, gitBytes, gitWithStatus } from '../git/git';
import type { GitStoreLocation } from '../git/git-store-location';
import { fetchStoreBranch, pushRunCommit } from '../git/git-store';
import { bringToCommit } from './bring-to-commit';
import { GitStorePushRejectedError, GitStoreMissingCommitError } from '../git/git-store-errors';
import { isCommit } from '../git/objects';
import { commitAll } from './run-worktree';
import { resetWorkTree } from './work-tree-reset';

export interface HostRunsOptions {
  /** The store every host reaches; null: runs never move (a dead host's runs wait for it). */
  store: GitStoreLocation | null;
  /** This host's ACA_HOME: its disk id, and the git directories of runs prepared or adopted here. */
  home: string;
  /** Where this host puts runs' work trees (ACA_WORKSPACES). */
  workspacesRoot: string;
  author: { name: string; email: string };
  /** Each push of a step's commit gives up after this long (the store counts as unreachable). */
  pushTimeoutMs?: number;
}

/** The trailer that ties a commit to the step that made it, so a retry can recognise its own push. */
const STEP_TRAILER = 'Aca-Step';
/** The trailer naming the workflow execution that made a commit (a Reset starts a new one). */
const EXECUTION_TRAILER = 'Aca-Execution';

export interface CommitRequest {
  message: string;
  /** Names the step, unique within the execution. */
  step: string;
  /** The workflow execution (run id) the step belongs to. */
  execution: string;
  paths?: string[];
  warn?: (message: string) => void;
}

export class HostRuns {
  private diskId: string | null = null;

  constructor(private readonly options: HostRunsOptions) {}

  /** Whether steps push their commits, so that runs can move to another host. */
  get usesStore(): boolean {
    return this.options.store !== null;
  }

  /**
   * This disk's id: made once per ACA_HOME, so workers sharing a home (one host) share it, and
   * with it the host's task queues.
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

  queues(): HostQueues {
    return hostQueuesOf(this.disk());
  }

  /** Where this host puts a run's work tree, unless the run names a folder of this host. */
  workspaceFor(workflowId: string): string {
    return path.join(this.options.workspacesRoot, safeKey(workflowId));
  }

  /** The git directory of a run without `--repo` (or of a run adopted here), outside its work tree. */
  gitDirFor(workflowId: string): string {
    return path.join(this.options.home, 'git', `${safeKey(workflowId)}.git`);
  }

  /**
   * The run's work tree at `commit` (the one the workflow recorded). Only the branch's tip is
   * compared (a status of a large tree would cost every tool call a scan): a step that changes
   * files commits them, so a tree at the right tip holds the right files.
   */
  async atCommit(place: RunPlace, commit: string): Promise<RunPlace> {
    if ((await this.tipOf(place)) === commit) return place;
    if (!(await isCommit({ gitDir: place.commonDir }, commit))) {
      if (!this.options.store) throw new GitStoreMissingCommitError('(no git store)', place.branch, commit);
      await fetchStoreBranch(this.options.store, place.commonDir, place.branch);
    }
    await resetWorkTree(place, place.branch, commit, {
      linked: place.gitDir !== place.commonDir,
      removeIgnored: false,
    });
    return place;
  }

  /**
   * Takes over a run from the store at `commit`: a work tree and git directory of this host's,
   * made afresh (whatever a run of the same id left there goes, ignored files too). On the disk
   * the run was prepared on, the run's own paths are used as they are.
   *
   * @returns the run's place on this host.
   */
  async adopt(place: RunPlace, commit: string): Promise<RunPlace> {
    if (place.disk === this.disk() && fs.existsSync(path.join(place.gitDir, 'HEAD'))) {
      return this.atCommit(place, commit);
    }
    if (!this.options.store) throw new Error('a run moves to another host only through a git store');
    const { gitDir, commonDir, workTree } = await bringToCommit(this.options.store, {
      workTree: this.workspaceFor(place.workflowId),
      gitDir: this.gitDirFor(place.workflowId),
      branch: place.branch,
      commit,
      removeIgnored: true,
    });
    return {
      workflowId: place.workflowId,
      branch: place.branch,
      disk: this.disk(),
      gitDir,
      commonDir,
      workTree,
    };
  }

  /**
   * Commits what the step that started from `from` changed (only `paths`, when given) on the
   * run's branch and, with a store, pushes it there, expecting the store at `from`. A retry of a
   * step whose first try committed (and maybe pushed) and then died finds that commit (same
   * parent, same step, same execution) and takes it. A store branch that a Reset left behind
   * (commits of another execution after the recorded one) is replaced: the reset execution is
   * the run now.
   *
   * @returns the new commit, or null when nothing changed.
   */
  async commit(place: RunPlace, from: string, request: CommitRequest): Promise<string | null> {
    const tip = await this.tipOf(place);
    if (tip !== from && tip !== null) {
      const made = await this.madeBy(place, tip);
      if (made.parent === from && made.step === request.step && made.execution === request.execution) {
        await this.push(place, from, tip, request);
        return tip;
      }
      await this.atCommit(place, from);
    }
    const message = `${request.message}\n\n${STEP_TRAILER}: ${request.step}\n${EXECUTION_TRAILER}: ${request.execution}`;
    const commit = await commitAll(place, message, this.options.author, request.paths, request.warn);
    if (commit === null) return null;
    return this.push(place, from, commit, request);
  }

  /**
   * The branch's tip: read from its loose ref file when there is one, since every file tool call
   * asks and a git process costs tens of milliseconds; else (a packed ref) from git.
   */
  private async tipOf(place: RunPlace): Promise<string | null> {
    const loose = looseTip(place);
    if (loose) return loose;
    const tip = await git(place, ['rev-parse', '--verify', '--quiet', `refs/heads/${place.branch}`], {
      allowExitCodes: [1],
    });
    return tip.trim() || null;
  }

  /** Pushes the step's commit (made from `from`) to the store, if any; the commit the run goes on from. */
  private async push(place: RunPlace, from: string, commit: string, request: CommitRequest): Promise<string> {
    const store = this.options.store;
    if (!store) return commit;
    const timeout = this.options.pushTimeoutMs ? { timeoutMs: this.options.pushTimeoutMs } : {};
    try {
      await pushRunCommit(store, place, place.branch, commit, from, timeout);
      return commit;
    } catch (err) {
      const actual = err instanceof GitStorePushRejectedError ? err.actual : null;
      if (!actual) throw err;
      if (!(await isCommit({ gitDir: place.commonDir }, actual))) {
        await fetchStoreBranch(store, place.commonDir, place.branch);
      }
      const made = await this.madeBy(place, actual);
      if (made.parent === from && made.step === request.step && made.execution === request.execution) {
        // An earlier try of this step pushed from a copy that is gone (the run moved since).
        await this.atCommit(place, actual);
        return actual;
      }
      if (
        made.execution &&
        made.execution !== request.execution &&
        (await this.descends(place, actual, from))
      ) {
        await pushRunCommit(store, place, place.branch, commit, actual, timeout);
        return commit;
      }
      throw err;
    }
  }

  private async madeBy(
    place: RunPlace,
    commit: string,
  ): Promise<{ parent: string; step: string; execution: string }> {
    const target = { gitDir: place.commonDir };
    const parents = await git(target, ['rev-list', '--parents', '-n', '1', '--end-of-options', commit]);
    const trailer = async (key: string) =>
      (await git(target, ['log', '-1', `--format=%(trailers:key=${key},valueonly)`, commit])).trim();
    return {
      parent: parents.trim().split(' ').slice(1).join(' '),
      step: await trailer(STEP_TRAILER),
      execution: await trailer(EXECUTION_TRAILER),
    };
  }

  private async descends(place: RunPlace, commit: string, from: string): Promise<boolean> {
    const result = await gitWithStatus(
      { gitDir: place.commonDir },
      ['merge-base', '--is-ancestor', '--end-of-options', from, commit],
      { allowExitCodes: [1, 128] },
    );
    return result.code === 0;
  }

  /**
   * The `--tests` originals the sandbox mounts over the workspace copies, on a host that adopted
   * the run (where the folder given is not the user's): the files as `commit` (the one that added
   * them to the branch) has them, written once into a folder of this host's that no test reaches.
   */
  async acceptanceOriginals(place: RunPlace, commit: string, files: string[]): Promise<string> {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit)) throw new Error(`"${commit}" is not a full commit id`);
    for (const file of files) {
      // The names come from a listing of the user's folder; a name that leaves it is never written.
      const parts = file.split('/');
      if (file === '' || parts.some((part) => part === '' || part === '.' || part === '..')) {
        throw new Error(`"${file}" is not a path inside the --tests folder`);
      }
    }
    const folder = path.join(this.options.home, 'acceptance', `${safeKey(place.workflowId)}-${commit}`);
    if (fs.existsSync(folder)) return folder;
    // A name no other worker of this ACA_HOME uses (workers in containers may share a pid).
    const temporary = `${folder}.new-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
    try {
      for (const file of files) {
        const blob = await gitBytes({ gitDir: place.commonDir }, ['cat-file', 'blob', `${commit}:${file}`]);
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
}

/** The commit the branch's loose ref file names; null when it has none (packed, or no branch). */
function looseTip(place: RunPlace): string | null {
  try {
    const loose = fs
      .readFileSync(path.join(place.commonDir, 'refs', 'heads', ...place.branch.split('/')), 'utf8')
      .trim();
    return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(loose) ? loose : null;
  } catch {
    return null;
  }
}
