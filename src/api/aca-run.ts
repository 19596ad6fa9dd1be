import {
  Client,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowExecutionDescription,
  type WorkflowExecutionStatusName,
  type WorkflowHandle,
} from '@temporalio/client';
import { type AcaConfig } from '../config';
import {
  RunNotFoundError,
  RunStateError,
  UnappliedChangesError,
  UnreachableError,
  UserInputError,
} from '../shared/errors';
import type { RunResult, RunSnapshot } from '../shared/run-types';
import {
  applyMessage,
  applyRun,
  diffRun,
  diffRunBytes,
  reviewRisks,
  discardRun,
  deleteStoreBranch,
  discardedAt,
  markDiscarded,
  wasApplied,
  type ApplyRunResult,
  type ApplyAllowances,
  type ReviewRisk,
  type DiscardRunResult,
} from '../repo';
import { codingAgentWorkflow } from '../workflows';
import { extendUpdate, feedbackUpdate, pauseSignal, resumeSignal, stateQuery } from '../workflows/signals';
import { missingWorker } from '../temporal/task-queue-pollers';
import { readRunResult } from '../shared/run-failure';
import { runCommitsHere } from './run-commits-here';
import { endedWithoutResult, snapshotWithoutResult } from './run-without-result';

/** The workflow type of every aca run, taken from the workflow function. */
export const RUN_WORKFLOW_TYPE = codingAgentWorkflow.name;

/** A Temporal handle typed by the workflow: result, query, signals and update. */
export type RunHandle = WorkflowHandle<typeof codingAgentWorkflow>;

/** What a run's methods need of the client that made it (AcaClient). */
export interface RunClient {
  readonly temporal: Client;
  readonly config: AcaConfig;
}

/** One run: its state, its result, and the signals and update that steer it. */
export class AcaRun {
  constructor(
    private readonly client: RunClient,
    readonly id: string,
  ) {}

  /** The typed Temporal handle, for what this class does not cover. */
  get handle(): RunHandle {
    return this.client.temporal.workflow.getHandle<typeof codingAgentWorkflow>(this.id);
  }

  /** Temporal's status of the run (RUNNING, COMPLETED, …); RunNotFoundError for an unknown id. */
  async status(): Promise<WorkflowExecutionStatusName> {
    return (await this.description()).status.name;
  }

  /** The run's workflow execution as Temporal describes it; RunNotFoundError when it is no aca run. */
  private async description(): Promise<WorkflowExecutionDescription> {
    if (!this.id.trim()) throw new UserInputError('a run id is needed');
    try {
      const description = await this.handle.describe();
      if (description.type !== RUN_WORKFLOW_TYPE) {
        throw new RunNotFoundError(this.id, `${this.id} is not an aca run`);
      }
      return description;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new RunNotFoundError(this.id);
      throw err;
    }
  }

  /** The run's snapshot: live while it runs, from its result once it has ended. */
  async state(): Promise<RunSnapshot> {
    const description = await this.description();
    const { taskQueue } = description;
    const status = description.status.name;
    if (status === 'RUNNING') {
      // A query needs a worker: with none polling it would hang until Temporal gives up on it.
      // Either way Temporal is out of reach for this run (exit 3), never a failure of the run.
      const missing = await missingWorker(this.client.temporal, taskQueue);
      if (missing) throw new UnreachableError(missing);
      try {
        return await this.handle.query(stateQuery);
      } catch (err) {
        throw new UnreachableError(`Temporal could not answer for run ${this.id}: ${(err as Error).message}`);
      }
    }
    try {
      return { ...(await readRunResult(this.handle)), paused: false, waiting: null };
    } catch (err) {
      // Stopped by Temporal rather than ended by aca: no result, but its history says what is left.
      if (endedWithoutResult(status)) {
        return snapshotWithoutResult(this.client.temporal, description, this.client.config);
      }
      throw new RunStateError(
        this.id,
        `run ${this.id} ended without a result (${status}): ${(err as Error).message}`,
      );
    }
  }

  /** Pauses the run: no new step starts until `resume`. Returns the snapshot from before. */
  async pause(): Promise<RunSnapshot> {
    const before = await this.runningSnapshot('pause');
    if (before.paused) throw new RunStateError(this.id, `run ${this.id} is already paused`);
    await this.handle.signal(pauseSignal);
    return before;
  }

  async resume(): Promise<RunSnapshot> {
    const before = await this.runningSnapshot('resume');
    if (!before.paused) throw new RunStateError(this.id, `run ${this.id} is not paused`);
    await this.handle.signal(resumeSignal);
    return before;
  }

  /** Guidance for the next Coder turn; resolves once the run has accepted it. */
  async feedback(text: string): Promise<{ pending: number }> {
    if (typeof text !== 'string' || !text.trim()) throw new UserInputError('the feedback text is empty');
    const ended = () =>
      new RunStateError(
        this.id,
        `run ${this.id} has ended; feedback goes only to a running run: aca continue ${this.id} "<instruction>" starts a new run from where it ended`,
      );
    if ((await this.status()) !== 'RUNNING') throw ended();
    try {
      const answer = await this.handle.executeUpdate(feedbackUpdate, { args: [text] });
      return { pending: answer.pending };
    } catch (err) {
      // The run may end between the look-up and the update.
      if (err instanceof WorkflowNotFoundError) throw ended();
      if (err instanceof WorkflowUpdateFailedError) {
        throw new RunStateError(
          this.id,
          `feedback rejected: ${(err.cause as Error | undefined)?.message ?? err.message}`,
        );
      }
      throw err;
    }
  }

  /**
   * Gives a run waiting at its iteration limit (`onLimit: 'ask'`) `iterations` more attempts, with
   * optional feedback for its next Coder turn; resolves with its new limit.
   */
  async extend(iterations: number, feedback?: string): Promise<{ maxIterations: number }> {
    if (!Number.isInteger(iterations) || iterations < 1) {
      throw new UserInputError('--iterations must be a whole number of at least 1');
    }
    if (feedback !== undefined && !feedback.trim()) throw new UserInputError('the feedback text is empty');
    const notWaiting = (why: string) =>
      new RunStateError(this.id, `run ${this.id} is not waiting at its iteration limit (${why})`);
    const status = await this.status();
    if (status !== 'RUNNING') throw notWaiting(await this.endedPhrase(status));
    try {
      return await this.handle.executeUpdate(extendUpdate, {
        args: [{ iterations, ...(feedback !== undefined ? { feedback } : {}) }],
      });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw notWaiting('it has ended');
      if (err instanceof WorkflowUpdateFailedError) {
        const cause = (err.cause as Error | undefined)?.message ?? err.message;
        if (/not waiting at its iteration limit/.test(cause)) {
          const snapshot = await this.handle.query(stateQuery).catch(() => null);
          throw notWaiting(snapshot ? `it is ${snapshot.state}` : cause);
        }
        throw new RunStateError(this.id, `extend rejected: ${cause}`);
      }
      throw err;
    }
  }

  /** How an ended run ended, in the run's own words (SUCCESS, FAILED and why) where it has a result. */
  private async endedPhrase(status: WorkflowExecutionStatusName): Promise<string> {
    if (status === 'COMPLETED' || status === 'FAILED') {
      const result = await readRunResult(this.handle).catch(() => null);
      if (result) return `it ended ${result.state}${result.reason ? ` (${result.reason})` : ''}`;
    }
    const words: Partial<Record<WorkflowExecutionStatusName, string>> = {
      CANCELLED: 'it was cancelled',
      TERMINATED: 'it was terminated',
      TIMED_OUT: 'it timed out',
      FAILED: 'it ended with an error',
      CONTINUED_AS_NEW: 'it has ended',
    };
    return words[status] ?? 'it has ended';
  }

  /** Asks the run to stop; it ends FAILED with reason `cancelled` (a failed workflow in Temporal). */
  async cancel(): Promise<void> {
    const status = await this.status();
    if (status !== 'RUNNING')
      throw new RunStateError(this.id, `run ${this.id} has already ended (${status})`);
    await this.handle.cancel();
  }

  /**
   * The outcome, once the run has ended (waits for it): the RunResult whether the run ended
   * SUCCESS or FAILED (a FAILED run's workflow fails with the RunResult as its details, which a
   * plain Temporal client sees as a failure). RunStateError for a run Temporal stopped itself.
   */
  async result(): Promise<RunResult> {
    await this.status();
    try {
      return await readRunResult(this.handle);
    } catch (err) {
      if (!endedWithoutResult(await this.status())) throw err;
      const { error } = await this.state();
      throw new RunStateError(
        this.id,
        `run ${this.id} was ${error}; it has no result: aca status ${this.id} shows what is left of it, aca discard ${this.id} removes its worktree and branch`,
      );
    }
  }

  /**
   * The run's changes against its base commit as a unified diff; with `stat`, one line per file
   * with its counts. Works while the run is going too (up to its last commit).
   */
  async diff(options: { stat?: boolean } = {}): Promise<string> {
    const { place, base, head } = await this.commitsToDiff();
    return diffRun(place, base, head, options);
  }

  /** diff() as git wrote it, byte for byte: what `aca diff --raw` prints. */
  async diffBytes(options: { stat?: boolean } = {}): Promise<Buffer> {
    const { place, base, head } = await this.commitsToDiff();
    return diffRunBytes(place, base, head, options);
  }

  private async commitsToDiff(): ReturnType<typeof runCommitsHere> {
    const snapshot = await this.state();
    const discarded = this.discardedAt();
    if (discarded) {
      throw new RunStateError(this.id, `run ${this.id} was discarded (${discarded}); its changes are gone`);
    }
    return runCommitsHere(this.client.config, this.id, snapshot, 'reading-copy');
  }

  /**
   * What the run's changes hold that its diff cannot show or that acts beyond the code beside it
   * (binary files, links, git and test configuration, Python start-up files): the "Review with
   * care" list of `aca result`, `aca diff --stat` and `aca apply`. Given the run's outcome, its
   * commits are read from it rather than from a query.
   */
  async reviewRisks(outcome?: RunResult): Promise<ReviewRisk[]> {
    const snapshot = outcome ?? (await this.state());
    const discarded = this.discardedAt();
    if (discarded) {
      throw new RunStateError(this.id, `run ${this.id} was discarded (${discarded}); its changes are gone`);
    }
    const { place, base, head } = await runCommitsHere(this.client.config, this.id, snapshot, 'reading-copy');
    return reviewRisks({ gitDir: place.commonDir }, base, head);
  }

  /**
   * Brings an ended `--repo` run's changes onto the branch checked out in its repository as one
   * commit whose message starts with the task's first line (see applyRun for what is refused).
   * ApplyConflictError (with `files`) when they conflict, ApplyNeedsConsentError when it adds
   * links out of the repository (or into a git directory), new binary files or `.gitattributes`
   * changes not allowed: the repository is then unchanged.
   */
  async apply(options: ApplyAllowances = {}): Promise<ApplyRunResult> {
    const snapshot = await this.endedSnapshot('applied');
    if (snapshot.repo === null) {
      throw new UserInputError(
        `run ${this.id} was not started with --repo, so there is no repository to apply it to; its files are in ${snapshot.workspace}`,
      );
    }
    const { place, base, head } = await runCommitsHere(this.client.config, this.id, snapshot, 'repository');
    return applyRun({
      repoDir: snapshot.repo,
      commonDir: place.commonDir,
      base,
      head,
      message: applyMessage(await this.taskLine(), this.id, snapshot.branch),
      allowBinary: options.allowBinary === true,
      allowLinks: options.allowLinks === true,
      allowAttributes: options.allowAttributes === true,
    });
  }

  /**
   * Removes an ended run's worktree and branch (or, without `--repo`, its workspace and git
   * directory). Changes never applied are only thrown away with `force`; without it an
   * UnappliedChangesError says how many files would be lost.
   */
  async discard(options: { force?: boolean } = {}): Promise<DiscardRunResult> {
    const snapshot = await this.endedSnapshot('discarded');
    if (!snapshot.place) {
      throw new RunStateError(
        this.id,
        `run ${this.id} ended before its workspace was prepared; nothing to discard`,
      );
    }
    // Discarded once already: what is left (a store's branch) holds nothing the user could lose.
    if (options.force !== true && snapshot.changedFiles.length > 0 && this.discardedAt() === null) {
      const applied =
        snapshot.repo !== null && (await wasApplied(snapshot.place.commonDir, this.id, snapshot.branch));
      if (!applied)
        throw new UnappliedChangesError(this.id, snapshot.changedFiles.length, snapshot.repo !== null);
    }
    const removed = await discardRun({ place: snapshot.place, repo: snapshot.repo });
    // Last, so a store out of reach fails the discard after the local parts are gone; discarding
    // again then only has the store's branch left to remove.
    const storeTip = snapshot.branch
      ? await deleteStoreBranch(this.client.config.gitStore, snapshot.branch)
      : null;
    markDiscarded(this.client.config.home, this.id);
    return { ...removed, store: storeTip ? this.client.config.gitStore.display : null };
  }

  /** When this home discarded the run (ISO time), or null. */
  discardedAt(): string | null {
    return discardedAt(this.client.config.home, this.id);
  }

  private async endedSnapshot(action: 'applied' | 'discarded'): Promise<RunSnapshot> {
    if ((await this.status()) === 'RUNNING') {
      throw new RunStateError(
        this.id,
        `run ${this.id} is still running; it can be ${action} once it has ended (aca cancel ${this.id} stops it)`,
      );
    }
    return this.state();
  }

  /** The task's first line: the workflow's static summary, which a run that continued as new has on its first execution. */
  private async taskLine(): Promise<string> {
    const latest = await (await this.handle.describe()).staticSummary();
    if (latest?.trim()) return latest;
    try {
      let first: { runId: string; startTime: Date } | undefined;
      const query = `WorkflowId = '${this.id.replace(/'/g, "\\'")}'`;
      for await (const execution of this.client.temporal.workflow.list({ query })) {
        if (!first || execution.startTime < first.startTime) first = execution;
      }
      if (!first) return '';
      const description = await this.client.temporal.workflow.getHandle(this.id, first.runId).describe();
      return (await description.staticSummary()) ?? '';
    } catch {
      // Visibility may lag or be unavailable; the message then names the run instead of the task.
      return '';
    }
  }

  private async runningSnapshot(action: 'pause' | 'resume'): Promise<RunSnapshot> {
    const status = await this.status();
    if (status !== 'RUNNING') {
      throw new RunStateError(this.id, `run ${this.id} has ended (${status}); it cannot be ${action}d`);
    }
    return this.handle.query(stateQuery);
  }
}
