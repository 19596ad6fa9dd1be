import { condition, workflowInfo } from '@temporalio/workflow';
import type { RememberAttemptInput } from '../activities/memory-activities';
import type { RunInput, RunPlace, RunSnapshot, RunTestSetup } from '../shared/run-types';
import { safeKey } from '../shared/safe-key';
import { mergeTargets } from '../shared/targets';
import type { AgentRole, FailureReason, Plan, TokenUsage } from '../shared/types';
import { runActivities, type RunActivities } from './activity-options';
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
  /** The id of the disk the run was prepared on (see RunPlace). */
  disk: string;
  /** The commit that added the `--tests` files, whose originals a worker without them reads there. */
  acceptanceCommit: string | null;
  /** The setup command, run again on a worker whose copy of the run never had it. */
  setupCommand: string | null;
  /** Commits made so far: each commit step is named by its number, so a retry knows its own push. */
  commitSteps: number;
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

const NO_TARGETS: Pick<RunRecord, 'targets' | 'failingTests' | 'unknownTargets'> = {
  targets: [],
  failingTests: [],
  unknownTargets: [],
};

/** The record carried over, with the fields a run started before targets were recorded lacks. */
function carriedRecord(carried: CarriedState | undefined): RunRecord | undefined {
  return carried && { ...NO_TARGETS, ...carried.record };
}

/** Ends the run early with a reason; caught at the top of the workflow. */
export class RunStopped extends Error {
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
  readonly activities: RunActivities;
  readonly machine: RunStateMachine;
  readonly record: RunRecord;
  readonly work: RunWork;
  readonly memory = new MemoryQueue();
  /** Attempts started by this execution (not counting those of earlier ones). */
  attemptsThisExecution = 0;
  /** Set once the run begins to end: no more pauses or feedback. */
  ending = false;

  constructor(
    readonly input: RunInput,
    carried: CarriedState | undefined,
  ) {
    this.activities = runActivities(input.options);
    const link = input.link ?? null;
    this.machine = new RunStateMachine(carried?.machine, () => this.publish());
    // A retry or a fork also keeps the targets its plan added.
    const targets = mergeTargets(input.targets, link && link.kind !== 'continue' ? link.plan?.targets : []);
    this.record = carriedRecord(carried) ?? {
      workflowId: this.workflowId,
      reason: null,
      iterations: link?.attemptsBefore ?? 0,
      maxIterations: input.options.maxIterations,
      passRate: null,
      tests: { passed: 0, failed: 0, errors: 0 },
      workspace: input.workspace,
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
      disk: '',
      acceptanceCommit: null,
      setupCommand: null,
      commitSteps: 0,
      pendingNotes: [],
    };
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
    publishRun(this.snapshot(), this.input.language, note);
  }

  /** Resolves at once unless the run is paused; no new step starts while it is. */
  async whenNotPaused(): Promise<void> {
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

  /**
   * Commits what the last turn changed on the run's branch; the commit id goes into history (the
   * activity's result), so any later step can name the files of any attempt.
   */
  async commitWork(message: string): Promise<void> {
    const place = this.place();
    if (!place) return;
    this.work.commitSteps += 1;
    const commit = await this.activities.workspace.commitWork.executeWithOptions(
      { summary: `git · ${message.slice(0, 80)}` },
      [
        {
          message,
          place,
          step: `${this.runKey}/commit-${this.work.commitSteps}`,
        },
      ],
    );
    this.recordCommit(commit);
  }

  /**
   * The run's work tree as the steps that read or change it are given it: the branch, the last
   * commit recorded and where it was prepared. Null before the branch exists.
   */
  place(): RunPlace | null {
    const { git, branch, headCommit } = this.record;
    if (!git || !branch || !headCommit) return null;
    return { workflowId: this.workflowId, branch, commit: headCommit, git, disk: this.work.disk };
  }

  /** A step's commit (null: it changed nothing) becomes the one later steps start from. */
  recordCommit(commit: string | null | undefined): void {
    if (commit) this.record.headCommit = commit;
  }

  carry(): CarriedState {
    return { machine: this.machine.save(), record: this.record, work: this.work };
  }
}
