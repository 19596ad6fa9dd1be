import { ActivityFailure, condition, log, TimeoutFailure, workflowInfo } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { PendingCommit } from '../activities/host-steps';
import type { RememberAttemptInput } from '../activities/memory-activities';
import type { RunInput, RunPlace, RunSnapshot, RunTestSetup } from '../shared/run-types';
import { AcaError } from '../shared/errors';
import { safeKey } from '../shared/safe-key';
import { mergeTargets } from '../shared/targets';
import type { AgentRole, FailureReason, Plan, TokenUsage } from '../shared/types';
import {
  DEFAULT_HOST_START_TIMEOUT_MS,
  hostActivities,
  localHostActivities,
  runActivities,
  type HostActivities,
  type LocalHostActivities,
  type RunActivities,
  type RunHostQueues,
} from './activity-options';
import { MemoryQueue } from './memory-queue';
import { RunStateMachine, type MachineState } from './state-machine';
import { publishRun } from './visibility';

/** What users see of a run besides its state and transitions, which the state machine keeps. */
export type RunRecord = Omit<RunSnapshot, 'state' | 'paused' | 'transitions'>;

/** What the agents work from between turns. */
export interface RunWork {
  plan: Plan | null;
  /** The Tester writes tests on the first pass and after an analysis says they are wrong. */
  testsNeeded: boolean;
  testPass: number;
  /** The user's acceptance tests, which no agent may write. */
  protectedPaths: string[];
  /** `aca feedback` texts waiting for the next Coder turn. */
  pendingFeedback: string[];
  lastCoderSummary: string | null;
  /** The attempt whose tests just failed, for the Reflector and failure memory. */
  failedAttempt: RememberAttemptInput | null;
  /** How the tests run (decided at INIT); null until then. */
  testSetup: RunTestSetup | null;
  /** The stored report of the test command on the base commit, for `--repo` runs. */
  baselineRef: string | null;
  /** Failure memory holds the task (stored with the Planner's turn); outcomes need it. */
  taskRemembered: boolean;
  /** More attempts `aca extend` gave a run waiting at its limit, until the wait takes them. */
  extension: LimitExtension | null;
  /** The host that has the run's files: every step that reads or writes them goes to its queues. */
  host: RunHostQueues | null;
  /** The disk the run was prepared on, where the `--tests` folder given is the user's. */
  preparedOn: string | null;
  /** Whether the run can move to another host (a git store is configured). */
  movable: boolean;
  /**
   * Whether file tool calls and turn openings are offered to the worker running the workflow task
   * (see hereIfHost).
   */
  localSteps?: boolean;
  /** How long a host step may wait to start before the run moves, as the preparing host set it. */
  hostStartTimeoutMs?: number;
  /** How long the run's steps may go without a heartbeat, as the preparing host set it; absent: each step's own. */
  heartbeatTimeoutMs?: number;
  /** The commit that added the `--tests` files, whose originals a host that adopted the run reads there. */
  acceptanceCommit: string | null;
  /** The setup command, run again on a host that adopts the run. */
  setupCommand: string | null;
  /** The setup command has run on the run's first host. */
  setUp?: boolean;
  /** Commits made so far: each commit step is named by its number, so a retry knows its own push. */
  commitSteps: number;
  /** A finished turn's work, committed by the next step on the host (see commitFirst). */
  pendingCommit: { message: string; step: string } | null;
  /**
   * A turn the step before it already opened (the acceptance tests' step opens the Planner's, a
   * failed test run the Reflector's), so the turn starts with its first model step: a round trip
   * less. `ref` is the conversation that step opened, which after a Reset is an earlier
   * execution's.
   */
  openedTurn: { key: string; ref: string } | null;
  /** What the run itself tells the next Coder turn (a target the Planner named that does not exist). */
  pendingNotes?: string[];
}

export interface LimitExtension {
  iterations: number;
}

/** Everything a run hands to its next execution at continue-as-new. */
export interface CarriedState {
  machine: MachineState;
  record: RunRecord;
  work: RunWork;
}

/** Ends the run early with a reason; caught at the top of the workflow. */
export class RunStopped extends AcaError {
  constructor(
    readonly reason: Exclude<FailureReason, 'max_iterations'>,
    message: string,
  ) {
    super(message);
  }
}

/** One run's state and the services its phase handlers share. */
export class RunContext {
  readonly workflowId = workflowInfo().workflowId;
  /** The first execution's run id stays the same across continue-as-new, so refs do too. */
  readonly runKey = `${safeKey(workflowInfo().workflowId)}/${safeKey(workflowInfo().firstExecutionRunId)}`;
  /**
   * This execution: a Reset starts a new one, whose model steps are asked anew (conversations are
   * keyed by it) and whose commits are its own.
   */
  readonly execution = workflowInfo().runId;
  /** The run's activities as last built, and the heartbeat timeout they were built with. */
  private built: { heartbeatTimeoutMs: number | undefined; activities: RunActivities } | null = null;
  readonly machine: RunStateMachine;
  readonly record: RunRecord;
  readonly work: RunWork;
  readonly memory: MemoryQueue;
  /** Attempts started by this execution (not counting those of earlier ones). */
  attemptsThisExecution = 0;
  /** Set once the run begins to end: no more pauses or feedback. */
  ending = false;
  /** The search attributes last upserted (see publishRun). */
  private readonly listed: { key: string | null } = { key: null };

  constructor(
    readonly input: RunInput,
    carried: CarriedState | undefined,
  ) {
    this.memory = new MemoryQueue(input.failureMemory !== false);
    const link = input.link ?? null;
    this.machine = new RunStateMachine(carried?.machine, () => this.publish());
    // A retry or a fork also keeps the targets its plan added.
    const targets = mergeTargets(input.targets, link && link.kind !== 'continue' ? link.plan?.targets : []);
    this.record = carried?.record ?? {
      workflowId: this.workflowId,
      reason: null,
      iterations: link?.attemptsBefore ?? 0,
      maxIterations: input.options.maxIterations,
      passRate: null,
      tests: { passed: 0, failed: 0, errors: 0 },
      workspace: input.workspace ?? '',
      files: [],
      tokens: { prompt: 0, completion: 0, cached: 0, reasoning: 0 },
      waiting: null,
      warning: null,
      lastAnalysis: link?.analysis ?? null,
      error: null,
      repo: input.repo?.path ?? null,
      branch: null,
      baseCommit: null,
      headCommit: null,
      changedFiles: [],
      baseline: null,
      regressions: [],
      targets: targets.map((id) => ({ id, outcome: 'missing' as const })),
      failingTests: [],
      unknownTargets: [],
      attempts: [],
      cost: null,
      parentRun: link?.parentRun ?? null,
      git: null,
      testCommand: null,
    };
    this.work = carried?.work ?? {
      // A continued run plans anew; a retry or a fork goes on with the plan and the tests it has.
      plan: link && link.kind !== 'continue' ? link.plan : null,
      testsNeeded: !(link && link.kind !== 'continue' && link.attemptsBefore > 0),
      testPass: 0,
      protectedPaths: [],
      pendingFeedback: link?.feedback ? [link.feedback] : [],
      lastCoderSummary: null,
      failedAttempt: null,
      testSetup: null,
      baselineRef: null,
      taskRemembered: false,
      extension: null,
      host: null,
      preparedOn: null,
      movable: false,
      acceptanceCommit: null,
      setupCommand: null,
      commitSteps: 0,
      pendingCommit: null,
      openedTurn: null,
      pendingNotes: [],
    };
  }

  /**
   * The activities of the shared queue. Before prepareRun the run does not know its heartbeat
   * timeout (the preparing host sets it), so they are built again once it does.
   */
  get activities(): RunActivities {
    const heartbeatTimeoutMs = this.work.heartbeatTimeoutMs;
    if (!this.built || this.built.heartbeatTimeoutMs !== heartbeatTimeoutMs) {
      this.built = { heartbeatTimeoutMs, activities: runActivities(this.input.options, heartbeatTimeoutMs) };
    }
    return this.built.activities;
  }

  snapshot(): RunSnapshot {
    const { workflowId, ...rest } = this.record;
    return {
      workflowId,
      state: this.machine.state,
      ...rest,
      transitions: [...this.machine.transitions],
      paused: this.machine.paused,
    };
  }

  /** The ids of the run's targets: the tests that must pass for it to succeed. */
  targetIds(): string[] {
    return this.record.targets.map((t) => t.id);
  }

  publish(note?: string): void {
    publishRun(this.snapshot(), this.input.language, this.listed, note);
  }

  /** Resolves at once unless the run is paused; no new step starts while it is. */
  async whenNotPaused(): Promise<void> {
    // The SDK records a stack trace for every promise a workflow makes (for its stack trace
    // query); a run that is not paused, nearly always, makes no condition at all.
    if (!this.machine.paused) return;
    await condition(() => !this.machine.paused);
  }

  /** Adds one model step's tokens and cost (null: the model has no price), then checks the budgets. */
  countUsage(role: AgentRole, usage: TokenUsage, usd: number | null): void {
    const tokens = this.record.tokens;
    tokens.prompt += usage.prompt;
    tokens.completion += usage.completion;
    tokens.cached = (tokens.cached ?? 0) + (usage.cached ?? 0);
    tokens.reasoning = (tokens.reasoning ?? 0) + (usage.reasoning ?? 0);
    if (typeof usd === 'number') {
      const cost = (this.record.cost ??= {
        usd: 0,
        byAgent: { planner: 0, coder: 0, tester: 0, reflector: 0 },
      });
      cost.usd += usd;
      cost.byAgent[role] += usd;
    }
    const total = tokens.prompt + tokens.completion;
    const budget = this.input.options.maxTokens;
    if (budget !== null && total > budget) {
      throw new RunStopped('budget', `token budget exceeded: ${total} tokens used, the budget is ${budget}`);
    }
    const maxCost = this.input.options.maxCostUsd ?? null;
    const spent = this.record.cost?.usd ?? 0;
    if (maxCost !== null && spent > maxCost) {
      throw new RunStopped(
        'budget',
        `cost budget exceeded: $${spent.toFixed(4)} spent, the budget is $${maxCost}`,
      );
    }
  }

  /** Where a turn's conversation is kept: per execution, so a Reset asks the model again. */
  turnRef(turnKey: string): string {
    return `${this.runKey}/${safeKey(this.execution)}/${turnKey}`;
  }

  /**
   * What the last turn changed is committed on the run's branch by the next step on the host
   * (see commitFirst), not by a step of its own: a round trip less per turn. Its commit id goes
   * into history with that step's result, so any later step can name the files of any attempt.
   */
  commitLater(message: string): void {
    if (!this.place()) return;
    this.work.commitSteps += 1;
    this.work.pendingCommit = { message, step: `commit-${this.work.commitSteps}` };
  }

  /** For a host step's input: the pending commit it makes before its own work, if any. */
  commitFirst(): { commitFirst: PendingCommit } | Record<string, never> {
    const pending = this.work.pendingCommit;
    return pending ? { commitFirst: { ...pending, execution: this.execution } } : {};
  }

  /** A host step given commitFirst has made it: its commit (null: nothing changed) is the run's. */
  committed(commit: string | null | undefined): void {
    this.recordCommit(commit);
    this.work.pendingCommit = null;
  }

  /**
   * The run's work tree as the steps that read or change it are given it: the branch, the last
   * commit recorded and the host that has it. Null before the branch exists.
   */
  place(): RunPlace | null {
    const { git, branch, headCommit } = this.record;
    const host = this.work.host;
    if (!git || !branch || !headCommit || !host) return null;
    return { workflowId: this.workflowId, branch, commit: headCommit, git, disk: host.disk };
  }

  /**
   * Runs a step of the run's host. When the host takes no step within the start timeout (only
   * for a run that can move: without a git store a dead host's runs wait for it), another worker
   * adopts the run from the store at the recorded commit, and the step goes to its queues. A test
   * queue that is only busy is told from a dead host by a step on the host's other queue.
   */
  async onHost<T>(
    step: (host: HostActivities) => Promise<T>,
    queue: 'files' | 'tests' = 'files',
  ): Promise<T> {
    for (;;) {
      const queues = this.work.host;
      if (!queues) throw new Error('the run has no host yet');
      const host = hostActivities(queues, this.hostStartTimeoutMs(), this.work.heartbeatTimeoutMs);
      try {
        return await step(host);
      } catch (err) {
        if (!isStartTimeout(err)) throw err;
        if (queue === 'tests' && (await this.hostAnswers(host))) continue;
        await this.moveRun();
      }
    }
  }

  /**
   * A host step certain to take milliseconds, as a local activity of the worker running this
   * workflow task when that worker has the run's files (the step itself checks): no round trip
   * through the host's queue. Null when it has not, or when the preparing host said nothing of
   * such a step stays on the machine (a git store, DATABASE_URL): the caller then sends the step
   * to the host's queue (onHost).
   */
  async hereIfHost<T>(
    step: (local: LocalHostActivities) => Promise<{ here: true; outcome: T } | { here: false }>,
  ): Promise<T | null> {
    if (!this.work.localSteps || this.work.movable || !this.work.host) return null;
    const answer = await step(this.localHost);
    return answer.here ? answer.outcome : null;
  }

  /**
   * A host step offered where the workflow runs (hereIfHost) when `offer` holds, and sent to the
   * host's queue (onHost) when it was not offered or not taken there: the same step either way.
   */
  async hereElseOnHost<T>(
    offer: boolean,
    here: (local: LocalHostActivities) => Promise<{ here: true; outcome: T } | { here: false }>,
    onHost: (host: HostActivities) => Promise<T>,
  ): Promise<T> {
    return (offer ? await this.hereIfHost(here) : null) ?? (await this.onHost(onHost));
  }

  private readonly localHost = localHostActivities();

  private hostStartTimeoutMs(): number | undefined {
    if (!this.work.movable) return undefined;
    return (
      this.input.options.hostStartTimeoutMs ?? this.work.hostStartTimeoutMs ?? DEFAULT_HOST_START_TIMEOUT_MS
    );
  }

  private async hostAnswers(host: HostActivities): Promise<boolean> {
    try {
      await host.ping.hostAlive.executeWithOptions({ summary: "host · is the run's host alive?" }, []);
      return true;
    } catch (err) {
      if (isStartTimeout(err)) return false;
      throw err;
    }
  }

  /** Another worker takes the run over from the git store, its setup command run again there. */
  private async moveRun(): Promise<void> {
    const { record, work } = this;
    const from = work.host!.host;
    const adopted = await this.activities.repository.adoptRun.executeWithOptions(
      { summary: `host · adopt the run from the git store (${from} took no step)` },
      [{ place: this.place()! }],
    );
    log.warn('the run moved to another host', { from, to: adopted.queues.host });
    work.host = adopted.queues;
    record.git = adopted.git;
    record.workspace = adopted.git.workTree;
    this.publish();
    const command = work.setupCommand;
    // Before the run's own setup step has succeeded, that step (retried on the new host) runs it.
    if (!command || !work.testSetup || !work.setUp) return;
    const setup = await this.onHost(
      (host) =>
        host.testing.runSetup.executeWithOptions(
          { summary: `setup · ${command.slice(0, 80)} (adopted run)` },
          [
            {
              language: this.input.language,
              command,
              setup: work.testSetup!,
              network: this.input.setupNetwork,
              place: this.place()!,
              execution: this.execution,
            },
          ],
        ),
      'tests',
    );
    if (!setup.ok) log.warn('the setup command failed on the adopting host', { outcome: setup.outcome });
  }

  /** A step's commit (null: it changed nothing) becomes the one later steps start from. */
  recordCommit(commit: string | null | undefined): void {
    if (commit) this.record.headCommit = commit;
  }

  /** The acceptance tests' commit, for a test run on a host that adopted the run. */
  acceptanceCommitHere(): string | null {
    return this.work.host?.disk === this.work.preparedOn ? null : this.work.acceptanceCommit;
  }

  carry(): CarriedState {
    return { machine: this.machine.save(), record: this.record, work: this.work };
  }
}

/** A step that no worker of the host's queue started in time. */
function isStartTimeout(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
  );
}
