import { ApplicationFailure, condition, log } from '@temporalio/workflow';
import type { RememberAttemptInput } from '../activities/memory-activities';
import {
  attemptPassed,
  describeTargets,
  MAX_TARGETS,
  targetFile,
  targetProblem,
  type TargetResult,
} from '../shared/targets';
import { FAILURE_TYPES } from '../shared/failure-types';
import type { Plan, TurnFinish } from '../shared/types';
import { runAgentTurn, type TurnRequest, type TurnResult } from './agent-turn';
import type { RunContext } from './run-context';
import { prepareRunPhase } from './run-init';
import type { RunEnding } from './run-ending';
import type { RunPhase, WorkingPhase } from './state-machine';
import { commitTurn } from './turn-commit';
import { countIterationStarted } from './visibility';

/** What a phase decides: the next phase, or how the run ends. */
export type PhaseOutcome = { next: RunPhase } | { end: RunEnding };

/** One handler per phase of the state table; the workflow makes the move each one decides. */
export const PHASE_HANDLERS: Record<WorkingPhase, (run: RunContext) => Promise<PhaseOutcome>> = {
  INIT: async (run) => {
    await prepareRunPhase(run);
    return { next: 'PLANNING' };
  },
  PLANNING: plan,
  CODING: code,
  TESTING: test,
  REFLECTING: reflect,
};

/**
 * A retry or a fork goes on with the plan it took over, without a Planner's turn. Before the
 * Planner's turn only such a run has a plan (see RunContext: a continued run starts without its
 * parent's).
 */
function takesOverPlan(run: RunContext): boolean {
  return Boolean(run.work.plan);
}

function plannerTurn(run: RunContext): TurnRequest {
  return {
    role: 'planner',
    turnKey: 'planner',
    context: {},
    recallLessons: run.input.failureMemory !== false,
  };
}

async function plan(run: RunContext): Promise<PhaseOutcome> {
  if (takesOverPlan(run)) {
    rememberTask(run);
    return { next: 'CODING' };
  }
  let planned: TurnResult;
  try {
    planned = await runAgentTurn(run, plannerTurn(run));
  } finally {
    // The first memory write, queued whatever the turn's fate. Not before the turn: on the
    // embedded database's single connection, the Planner's lookup would wait behind it.
    rememberTask(run);
  }
  const finish = finishedWith(run, planned, 'submit_plan');
  if (finish) run.work.plan = await takeUpPlanTargets(run, finish.plan);
  return { next: 'CODING' };
}

/**
 * The targets the Planner named: those that exist (in the baseline's report, or among the
 * acceptance files of a run without one) join the run's; any other is left out, and the next
 * Coder turn is told. The plan keeps only the ones taken up, for a retry or fork of the run.
 */
async function takeUpPlanTargets(run: RunContext, plan: Plan): Promise<Plan> {
  const { record, work } = run;
  const named = (plan.targets ?? []).filter((id) => !run.targetIds().includes(id));
  if (named.length === 0) return plan;
  const room = Math.max(0, MAX_TARGETS - record.targets.length);
  const wellFormed = named.filter((id) => targetProblem(id) === null).slice(0, room);
  let found: TargetResult[];
  if (work.baselineRef && wellFormed.length > 0) {
    const checked = await run.activities.reports.checkTargets.executeWithOptions(
      { summary: "tester · check the plan's targets against the baseline" },
      [{ reportRef: work.baselineRef, targets: wellFormed }],
    );
    found = checked.targets.filter((t) => !checked.unknown.includes(t.id));
  } else {
    found = wellFormed
      .filter((id) => work.protectedPaths.includes(targetFile(id)))
      .map((id) => ({ id, outcome: 'missing' as const }));
  }
  const taken = found.map((t) => t.id);
  const left = named.filter((id) => !taken.includes(id));
  record.targets = [...record.targets, ...found];
  if (left.length > 0) {
    (work.pendingNotes ??= []).push(
      `The plan named ${left.length === 1 ? 'a target test' : 'target tests'} that ${left.length === 1 ? 'does' : 'do'} not exist: ${left.join(', ')}. The run does not require ${left.length === 1 ? 'it' : 'them'}; the targets it requires are ${record.targets.length ? describeTargets(record.targets) : 'none'}.`,
    );
  }
  run.publish();
  return { ...plan, targets: taken };
}

function rememberTask(run: RunContext): void {
  const { workflowId, input } = run;
  run.work.taskRemembered = true;
  run.memory.add('task', () =>
    run.activities.memoryWrites.rememberRun.executeWithOptions({ summary: 'memory · store task' }, [
      { workflowId, task: input.task, language: input.language },
    ]),
  );
}

async function code(run: RunContext): Promise<PhaseOutcome> {
  const { record, input, work } = run;
  const { maxIterations } = record;
  const { warnAt } = input.options;
  record.iterations += 1;
  run.attemptsThisExecution += 1;
  const iteration = record.iterations;
  countIterationStarted(input.language);
  if (iteration === warnAt && warnAt < maxIterations) {
    record.warning = `iteration ${iteration} of ${maxIterations}: ${maxIterations - iteration} attempts left before the run fails`;
    log.warn(record.warning);
  }
  run.publish();
  const feedback = work.pendingFeedback.splice(0, work.pendingFeedback.length);
  const notes = work.pendingNotes?.splice(0, work.pendingNotes.length) ?? [];
  const coded = await runAgentTurn(run, {
    role: 'coder',
    turnKey: `coder-${iteration}`,
    context: {
      plan: work.plan,
      analysis: record.lastAnalysis,
      feedback,
      regressions: record.regressions,
      ...(notes.length ? { notes } : {}),
      ...(record.targets.length ? { targets: record.targets } : {}),
    },
  });
  const finish = finishedWith(run, coded, 'finish');
  if (finish) work.lastCoderSummary = finish.summary.trim().slice(0, 500) || null;
  await commitTurn(run, 'coder', `coder-${iteration}`, finish?.summary);
  return { next: 'TESTING' };
}

async function test(run: RunContext): Promise<PhaseOutcome> {
  const { record, input, work } = run;
  const iteration = record.iterations;
  if (work.testsNeeded) {
    work.testPass += 1;
    const turnKey = `tester-${work.testPass}`;
    const tested = await runAgentTurn(run, {
      role: 'tester',
      turnKey,
      context: { testPass: work.testPass, analysis: record.lastAnalysis },
    });
    const finish = finishedWith(run, tested, 'finish');
    work.testsNeeded = false;
    await commitTurn(run, 'tester', turnKey, finish?.summary);
  }
  await run.whenNotPaused();
  const report = await run.onHost(
    (host) =>
      host.testing.runTests.executeWithOptions({ summary: `tester · run tests (attempt ${iteration})` }, [
        {
          runKey: run.runKey,
          attempt: iteration,
          language: input.language,
          testsDir: input.testsDir,
          protectedPaths: work.protectedPaths,
          setup: work.testSetup,
          baselineRef: work.baselineRef,
          ...run.hostStep()!,
          acceptanceCommit: run.acceptanceCommitHere(),
          ...(input.repo && record.baseCommit ? { baseCommit: record.baseCommit } : {}),
          ...run.targetsToJudge(),
        },
      ]),
    'tests',
  );
  record.regressions = report.regressions;
  record.failingTests = report.failingTests ?? [];
  if (report.targets) record.targets = report.targets;
  if (record.headCommit) {
    record.attempts.push({ iteration, commit: record.headCommit, passRate: report.passRate });
  }
  if (report.sandboxWarning) record.warning = report.sandboxWarning;
  record.passRate = report.passRate;
  record.tests = { passed: report.passed, failed: report.failed, errors: report.errors };
  run.publish();
  const attempt: RememberAttemptInput = {
    workflowId: run.workflowId,
    iteration,
    passRate: report.passRate,
    passed: report.passed,
    failed: report.failed + report.errors,
    reportRef: report.reportRef,
    analysis: null,
    analysisError: null,
  };
  if (attemptPassed({ success: report.success, targets: record.targets })) {
    return { end: { state: 'SUCCESS', reason: null, lastAttempt: { ...attempt, reportRef: null } } };
  }
  work.failedAttempt = attempt;
  return { next: 'REFLECTING' };
}

async function reflect(run: RunContext): Promise<PhaseOutcome> {
  const { record, work } = run;
  const failed = work.failedAttempt;
  if (!failed)
    throw ApplicationFailure.nonRetryable(
      'REFLECTING without a failed test run to reflect on',
      FAILURE_TYPES.runStateBroken,
    );
  const reflected = await runAgentTurn(run, {
    role: 'reflector',
    turnKey: `reflector-${record.iterations}`,
    context: {
      testReportRef: failed.reportRef,
      regressions: record.regressions,
      ...(record.targets.length ? { targets: record.targets } : {}),
    },
  });
  const finish = finishedWith(run, reflected, 'submit_analysis');
  if (finish) {
    record.lastAnalysis = finish.analysis;
    work.testsNeeded = finish.analysis.testsWrong;
  }
  const failure: RememberAttemptInput = {
    ...failed,
    analysis: finish?.analysis ?? null,
    analysisError: reflected.ok ? null : reflected.error,
  };
  work.failedAttempt = null;
  run.publish();
  if (record.iterations >= record.maxIterations && !(await waitAtLimit(run))) {
    return { end: { state: 'FAILED', reason: 'max_iterations', lastAttempt: failure } };
  }
  run.memory.add(`failure ${failure.iteration}`, () =>
    run.activities.memoryWrites.rememberAttempt.executeWithOptions(
      { summary: `memory · store failure of attempt ${failure.iteration}` },
      [failure],
    ),
  );
  return { next: 'CODING' };
}

/**
 * `--on-limit ask`: the run waits, on a durable timer, for `aca extend`. True when it was given
 * more attempts; false (end FAILED `max_iterations`) when not asked to wait or the timer fired.
 */
async function waitAtLimit(run: RunContext): Promise<boolean> {
  const { input, record, work } = run;
  if (input.options.onLimit !== 'ask') return false;
  record.waiting = 'limit';
  run.publish(
    `Waiting at the iteration limit: \`aca extend ${run.workflowId} --iterations N\` gives it N more attempts.`,
  );
  const extended = await condition(() => work.extension !== null, input.options.askTimeoutMs);
  record.waiting = null;
  if (!extended || !work.extension) {
    run.publish();
    return false;
  }
  record.maxIterations += work.extension.iterations;
  work.extension = null;
  record.warning = null;
  run.publish();
  return true;
}

/** The finishing call a turn ended with, if it ended with the expected one; else the error is shown. */
function finishedWith<T extends TurnFinish['tool']>(
  run: RunContext,
  turn: TurnResult,
  tool: T,
): Extract<TurnFinish, { tool: T }> | null {
  if (turn.ok && isFinish(turn.finish, tool)) return turn.finish;
  run.record.error = turn.ok ? `the turn ended with ${turn.finish.tool} instead of ${tool}` : turn.error;
  run.publish();
  return null;
}

function isFinish<T extends TurnFinish['tool']>(
  finish: TurnFinish,
  tool: T,
): finish is Extract<TurnFinish, { tool: T }> {
  return finish.tool === tool;
}
