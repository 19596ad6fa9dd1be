/**
 * A coding run driven through the workflow fake (workflow-fake.ts): stub activities in place of
 * the model, the sandbox and failure memory, each call logged with its arguments.
 * Test files that use it mock `@temporalio/workflow` with the fake before importing it.
 */
import type { AgentStepInput, AgentStepOutcome } from '../../src/activities/agent-activities';
import type { OpenTurnInput } from '../../src/agents/agent-turn';
import type { PrepareRunInput, PreparedRun } from '../../src/activities/repo-activities';
import type { RunTestsInput, TestRunSummary } from '../../src/activities/test-activities';
import type { PendingCommit } from '../../src/activities/host-steps';
import type {
  ClosedRun,
  CloseRunInput,
  PreparedWorkspace,
  PrepareWorkspaceInput,
} from '../../src/activities/workspace-activities';
import { readRunResult } from '../../src/shared/run-failure';
import {
  DEFAULT_RUN_OPTIONS,
  type RunInput,
  type RunOptions,
  type RunResult,
} from '../../src/shared/run-types';
import type { TurnFinish } from '../../src/shared/types';
import { attemptPassed } from '../../src/shared/targets';
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
  /** The worker running the workflow has the run's files: toolCallHere and openTurnHere take each step. */
  toolsHere?: boolean;
  /**
   * prepareRun does the workspaceStep it is given, as a worker without a git store does; else it
   * leaves it to the host's queue, as with a store (and as a stub may).
   */
  workspaceInPrepare?: boolean;
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
  const prepareWorkspace = async (
    input: Omit<PrepareWorkspaceInput, 'place'>,
  ): Promise<PreparedWorkspace> => {
    if (!input.openAfter) return { protectedPaths: [], commit: null };
    log.opens.set(input.openAfter.ref.split('/').pop()!, input.openAfter);
    return { protectedPaths: [], commit: null, openedRef: input.openAfter.ref };
  };
  resetWorkflowFake({
    prepareRun: async (input: PrepareRunInput): Promise<PreparedRun> => ({
      ...(input.workspaceStep && script.workspaceInPrepare
        ? { workspace: await prepareWorkspace(input.workspaceStep) }
        : {}),
      git: { gitDir: '/g', commonDir: '/g', workTree: input.workspace ?? '/w' },
      branch: `aca/${input.workflowId}`,
      baseCommit: 'base',
      startCommit: input.start?.commit ?? 'base',
      testSetup: {
        command: { kind: 'pytest', command: null, source: 'detected', label: 'pytest' },
        dependencies: [],
        limits: {},
      },
      setupCommand: input.setupCommand,
      queues: { disk: 'disk-1', host: 'host-1', tests: 'tests-1' },
      movable: false,
      // Offered where the workflow runs only when the test says the files are there.
      localSteps: script.toolsHere === true,
      ...script.prepared,
    }),
    prepareWorkspace,
    openTurn: async (input: { open: OpenTurnInput; commitFirst?: PendingCommit }) => {
      log.opens.set(input.open.ref.split('/').pop()!, input.open);
      return { commit: committedBy(input), ref: input.open.ref };
    },
    // As the real one: taken where the run's files are, unless the opening recalls lessons.
    openTurnHere: async (input: { open: OpenTurnInput; commitFirst?: PendingCommit }) => {
      if (!script.toolsHere) return { here: false, why: "the run's files are on another host" };
      if (input.open.recallLessons) return { here: false, why: 'recalling lessons may take seconds' };
      log.opens.set(input.open.ref.split('/').pop()!, input.open);
      return { here: true, outcome: { commit: committedBy(input), ref: input.open.ref } };
    },
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
    toolCallHere: async () =>
      script.toolsHere
        ? { here: true, outcome: { ok: true } }
        : { here: false, why: "the run's files are on another host" },
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
        ...(input.commitFirst ? { commit: committedBy(input) } : {}),
        ...outcome,
      };
      // As the real step does: a failed attempt opens the Reflector's turn, with the report's findings.
      const open = input.openIfFailed;
      if (!open || attemptPassed(summary)) return summary;
      log.opens.set(open.ref.split('/').pop()!, {
        ...open,
        context: {
          ...open.context,
          testReportRef: summary.reportRef,
          regressions: summary.regressions,
          ...(summary.targets?.length ? { targets: summary.targets } : {}),
        },
      });
      return { ...summary, openedRef: open.ref };
    },
    closeRun: async (input: CloseRunInput): Promise<ClosedRun> => ({
      commit: committedBy(input),
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

/** The commit a fake host step makes of the pending work it was given: `c-<step>`. */
export function committedBy(input: { commitFirst?: PendingCommit }): string | null {
  return input.commitFirst ? `c-${input.commitFirst.step}` : null;
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
