import type { RememberAttemptInput } from '../activities/memory-activities';
import type { HostQueues } from '../shared/host-queues';
import type { RunInput, RunSnapshot, RunTestSetup } from '../shared/run-types';
import { mergeTargets } from '../shared/targets';
import type { Plan } from '../shared/types';
import type { MachineState } from './state-machine';

/** What users see of a run besides its state and transitions, which the state machine keeps. */
export type RunRecord = Omit<RunSnapshot, 'state' | 'paused' | 'transitions'>;

/** What the workflow decides on between steps: what the agents work from, and where the run is. */
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
  /** The task queues of the host that has the run's files: every step that reads or writes them goes there. */
  host: HostQueues | null;
  /** The disk the run was prepared on, where the `--tests` folder given is the user's. */
  preparedOn: string | null;
  /** Whether the run can move to another host (a git store is configured). */
  movable: boolean;
  /** How long a host step may wait to start before the run moves, as the preparing host set it. */
  hostStartTimeoutMs?: number;
  /** How long the run's steps may go without a heartbeat, as the preparing host set it; absent: each step's own. */
  heartbeatTimeoutMs?: number;
  /** The commit that added the `--tests` files, whose originals a host that adopted the run reads there. */
  acceptanceCommit: string | null;
  /** The setup command, run again on a host that adopts the run. */
  setupCommand: string | null;
  /** Whether the project lets agents run commands (`.aca.json`); the worker may still say no. */
  runCommand: boolean;
  /** The setup command has run on the run's first host. */
  setUp?: boolean;
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

/** A new run's record: a linked run starts from what its earlier run left. */
export function startingRecord(workflowId: string, input: RunInput): RunRecord {
  const link = input.link ?? null;
  // A retry or a fork also keeps the targets its plan added.
  const targets = mergeTargets(input.targets, link && link.kind !== 'continue' ? link.plan?.targets : []);
  return {
    workflowId,
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
    place: null,
    testCommand: null,
  };
}

/** A new run's work: a continued run plans anew; a retry or a fork goes on with its plan and tests. */
export function startingWork(input: RunInput): RunWork {
  const link = input.link ?? null;
  return {
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
    runCommand: true,
    pendingNotes: [],
  };
}
