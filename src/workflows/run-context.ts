import { condition, workflowInfo } from '@temporalio/workflow';
import type { HostStepInput } from '../activities/host-steps';
import type { RunInput, RunSnapshot } from '../shared/run-types';
import { AcaError } from '../shared/errors';
import { safeKey } from '../shared/safe-key';
import type { AgentRole, FailureReason, TokenUsage } from '../shared/types';
import { runActivities, type HostActivities, type RunActivities } from './activity-options';
import { MemoryQueue } from './memory-queue';
import { stepOnHost } from './run-host';
import { startingRecord, startingWork, type CarriedState, type RunRecord, type RunWork } from './run-state';
import { RunStateMachine } from './state-machine';
import { publishRun } from './visibility';

export type { CarriedState, LimitExtension, RunRecord, RunWork } from './run-state';

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
    this.machine = new RunStateMachine(carried?.machine, () => this.publish());
    this.record = carried?.record ?? startingRecord(this.workflowId, input);
    this.work = carried?.work ?? startingWork(input);
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

  /** The run's targets for a test run to judge, when it has any. */
  targetsToJudge(): { targets: string[] } | Record<string, never> {
    const ids = this.targetIds();
    return ids.length ? { targets: ids } : {};
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
   * What the steps that read or change the run's files are given: where the files are and the
   * last commit recorded, which the step starts from. Null before the run is prepared.
   */
  hostStep(): HostStepInput | null {
    const { place, headCommit } = this.record;
    return place && headCommit ? { place, headCommit } : null;
  }

  /**
   * Runs a step of the run's host, on its files queue or its test queue; a run that can move goes
   * to another host when its own takes no step in time (see stepOnHost).
   */
  onHost<T>(step: (host: HostActivities) => Promise<T>, queue: 'files' | 'tests' = 'files'): Promise<T> {
    return stepOnHost(this, step, queue);
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
