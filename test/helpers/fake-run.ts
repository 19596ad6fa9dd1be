/**
 * A coding run driven through the workflow fake (workflow-fake.ts): stub activities in place of
 * the model, the sandbox and failure memory, each call logged with its arguments.
 * Test files that use it mock `@temporalio/workflow` with the fake before importing it.
 */
import type { AgentStepInput, AgentStepOutcome } from '../../src/activities/agent-activities';
import type { OpenTurnInput } from '../../src/agents/agent-turn';
import type { PrepareRunInput, PreparedRun } from '../../src/activities/repo-activities';
import type { RunTestsInput, TestRunSummary } from '../../src/activities/test-activities';
import type { ClosedRun, CloseRunInput, CommitTurnInput } from '../../src/activities/workspace-activities';
import { readRunResult } from '../../src/shared/run-failure';
import {
  DEFAULT_RUN_OPTIONS,
  type RunInput,
  type RunOptions,
  type RunPlace,
  type RunResult,
} from '../../src/shared/run-types';
import type { TurnFinish } from '../../src/shared/types';
import { resetWorkflowFake } from './workflow-fake';

export type StepAnswer = Partial<AgentStepOutcome>;

export interface FakeRunScript {
  /** Answers for a turn (`planner`, `coder-2`, `tester-1`, `reflector-1`) by step index. */
  step?: (turnKey: string, stepIndex: number) => StepAnswer | Promise<StepAnswer>;
  /** A test run's summary over the default (all of two tests pass), by attempt (0: baseline). */
  tests?: (attempt: number) => Partial<TestRunSummary> | Promise<Partial<TestRunSummary>>;
  /** Overrides of single activities. */
  activities?: Record<string, (...args: never[]) => unknown>;
  prepared?: Partial<PreparedRun>;
}

export interface FakeRunLog {
  /** Every model step: the turn it belongs to and its index. */
  steps: string[];
  /** Each turn's opening, by turn key. */
  opens: Map<string, Omit<OpenTurnInput, 'workspace'>>;
  memory: Array<{ kind: string; input: unknown }>;
}

export const FINISHES: Record<string, TurnFinish> = {
  planner: { tool: 'submit_plan', plan: { summary: 'plan', steps: ['write it'], files: ['a.py'] } },
  coder: { tool: 'finish', summary: 'wrote a.py' },
  tester: { tool: 'finish', summary: 'wrote tests' },
  reflector: {
    tool: 'submit_analysis',
    analysis: {
      rootCause: 'off by one',
      fixHypothesis: 'add one',
      filesToChange: ['a.py'],
      testsWrong: false,
    },
  },
};

export const failingTests = { passed: 1, failed: 1 };

/** The RunResult a call of the workflow ends with: a FAILED run throws it as its failure's details. */
export function runOutcome(run: Promise<RunResult>): Promise<RunResult> {
  return readRunResult({ result: () => run });
}

/** Where a fake host has run `workflowId`'s files: disk `disk-1`, git directory `/g` unless named. */
export function fakePlace(workflowId: string, workTree: string, disk = 'disk-1', gitDir = '/g'): RunPlace {
  return { workflowId, branch: `aca/${workflowId}`, disk, gitDir, commonDir: gitDir, workTree };
}

export function fakeRunInput(options: Partial<RunOptions> = {}, more: Partial<RunInput> = {}): RunInput {
  return {
    task: 'Write a.py',
    language: 'python',
    workspace: '/nonexistent/stub-workspace',
    testsDir: null,
    model: 'stub',
    options: { ...DEFAULT_RUN_OPTIONS, maxIterations: 3, warnAt: 3, ...options },
    repo: null,
    testCommand: null,
    setupCommand: null,
    setupNetwork: false,
    link: null,
    ...more,
  };
}

/** Resets the fake with stub activities for this script; returns the log they write. */
export function setUpFakeRun(script: FakeRunScript = {}): FakeRunLog {
  const log: FakeRunLog = { steps: [], opens: new Map(), memory: [] };
  const memory = (kind: string) => async (input: unknown) => {
    log.memory.push({ kind, input });
    return 0;
  };
  const tool = async () => ({ ok: true, commit: null });
  resetWorkflowFake({
    prepareRun: async (input: PrepareRunInput): Promise<PreparedRun> => ({
      place: fakePlace(input.workflowId, input.workspace ?? '/w'),
      baseCommit: 'base',
      startCommit: input.start?.commit ?? 'base',
      testSetup: {
        command: { kind: 'pytest', command: null, source: 'detected', label: 'pytest' },
        dependencies: [],
        limits: {},
      },
      setupCommand: input.setupCommand,
      runCommand: true,
      queues: { disk: 'disk-1', host: 'host-1', tests: 'tests-1' },
      movable: false,
      ...script.prepared,
    }),
    prepareWorkspace: async () => ({ protectedPaths: [], commit: null }),
    openTurn: async (input: { open: OpenTurnInput }) => {
      log.opens.set(input.open.ref.split('/').pop()!, input.open);
      return { ref: input.open.ref };
    },
    commitTurn: async (input: CommitTurnInput) => committedBy(input),
    async agentStep(input: AgentStepInput): Promise<AgentStepOutcome> {
      const turnKey = input.ref.split('/').pop()!;
      log.steps.push(`${turnKey}#${input.stepIndex}`);
      const answer = script.step ? await script.step(turnKey, input.stepIndex) : {};
      const role = turnKey.replace(/-\d+$/, '');
      return {
        toolCalls: [],
        finished: null,
        progress: true,
        usage: { prompt: 10, completion: 5 },
        note: null,
        usd: 0.25,
        ...('finished' in answer || 'toolCalls' in answer
          ? answer
          : { ...answer, finished: FINISHES[role]! }),
      };
    },
    create_file: tool,
    read_file: tool,
    edit_file: tool,
    async runTests(input: RunTestsInput): Promise<TestRunSummary> {
      const outcome = script.tests ? await script.tests(input.attempt) : {};
      const passed = outcome.passed ?? 2;
      const failed = outcome.failed ?? 0;
      const summary: TestRunSummary = {
        outcome: 'completed',
        passed,
        failed,
        errors: 0,
        passRate: passed / Math.max(1, passed + failed),
        message: null,
        reportRef: `report-${input.attempt}`,
        durationMs: 1,
        sandboxWarning: null,
        success: failed === 0 && passed > 0,
        regressions: [],
        regressionCount: 0,
        ...outcome,
      };
      return summary;
    },
    closeRun: async (input: CloseRunInput): Promise<ClosedRun> => ({
      files: input.listFiles ? ['a.py'] : null,
      changedFiles: [{ path: 'a.py', status: 'added', added: 1, removed: 0 }],
    }),
    rememberRun: memory('run'),
    rememberAttempt: memory('attempt'),
    rememberOutcome: memory('outcome'),
    ...(script.activities as Record<string, () => unknown>),
  });
  return log;
}

/** The commit a fake commitTurn step makes of a turn's work: `c-<step>`, as `c-coder-1`. */
export function committedBy(input: { step: string }): string {
  return `c-${input.step}`;
}

/** Resolves once the predicate holds, polling the event loop (the fake's workflow runs meanwhile). */
export async function eventually(what: string, predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A promise with its resolve function, for holding a stub activity until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
