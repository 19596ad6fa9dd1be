import { ApplicationFailure, condition, log } from '@temporalio/workflow';
import type { RememberAttemptInput } from '../activities/memory-activities';
import type { PrepareWorkspaceInput } from '../activities/workspace-activities';
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
import { openingSummary, runAgentTurn, turnOpening, type TurnRequest, type TurnResult } from './agent-turn';
import { RunStopped, type RunContext } from './run-context';
import type { RunEnding } from './run-ending';
import type { RunPhase, WorkingPhase } from './state-machine';
import { countIterationStarted } from './visibility';

/** What a phase decides: the next phase, or how the run ends. */
export type PhaseOutcome = { next: RunPhase } | { end: RunEnding };

/** One handler per phase of the state table; the workflow makes the move each one decides. */
export const PHASE_HANDLERS: Record<WorkingPhase, (run: RunContext) => Promise<PhaseOutcome>> = {
  INIT: prepareWorkspace,
  PLANNING: plan,
  CODING: code,
  TESTING: test,
  REFLECTING: reflect,
};

/**
 * The run's branch and work tree, its setup command, the baseline (the tests on the base commit,
 * for `--repo` runs) and then the user's acceptance tests, committed on the branch.
 */
async function prepareWorkspace(run: RunContext): Promise<PhaseOutcome> {
  const { input, record, work } = run;
  const link = input.link ?? null;
  // The Planner's turn opens in the same step as the acceptance tests, when the run is to plan.
  const planner = takesOverPlan(run) ? null : plannerTurn(run);
  // Nothing runs on the host between preparing the run and its workspace: one step may do both.
  const workspaceInPrepare = !input.repo && !input.setupCommand;
  const repository = input.repo ? `git · worktree of ${input.repo.path}` : 'git · repository of the run';
  const prepared = await run.activities.repository.prepareRun.executeWithOptions(
    { summary: workspaceInPrepare ? `${repository}; ${workspaceSummary(planner)}` : repository },
    [
      {
        workflowId: run.workflowId,
        ...(input.workspace ? { workspace: input.workspace } : {}),
        language: input.language,
        repo: input.repo,
        testCommand: input.testCommand,
        setupCommand: input.setupCommand,
        ...(input.limits ? { limits: input.limits } : {}),
        ...(input.testEnv ? { testEnv: input.testEnv } : {}),
        start: link
          ? {
              commit: link.startCommit,
              baseCommit: link.baseCommit,
              parentGit: link.parentGit,
              parentRun: link.parentRun,
            }
          : null,
        ...(workspaceInPrepare ? { workspaceStep: workspaceStep(run, planner) } : {}),
      },
    ],
  );
  record.git = prepared.git;
  record.branch = prepared.branch;
  record.baseCommit = prepared.baseCommit;
  record.headCommit = prepared.startCommit;
  record.testCommand = prepared.testSetup.command.label;
  record.workspace = prepared.git.workTree;
  work.testSetup = prepared.testSetup;
  work.host = prepared.queues;
  work.preparedOn = prepared.queues.disk;
  work.movable = prepared.movable;
  work.localSteps = prepared.localSteps === true;
  if (prepared.hostStartTimeoutMs) work.hostStartTimeoutMs = prepared.hostStartTimeoutMs;
  if (prepared.heartbeatTimeoutMs) work.heartbeatTimeoutMs = prepared.heartbeatTimeoutMs;
  work.setupCommand = prepared.setupCommand;
  run.publish();
  if (prepared.setupCommand) await runSetupCommand(run, prepared.setupCommand);
  if (link?.baseline) {
    // Same base commit as the run it came from: the same baseline.
    record.baseline = link.baseline.summary;
    work.baselineRef = link.baseline.ref;
  } else if (input.repo) {
    await run.whenNotPaused();
    const baseline = await run.onHost(
      (host) =>
        host.testing.runTests.executeWithOptions(
          { summary: `tester · baseline: ${prepared.testSetup.command.label}` },
          [
            {
              runKey: run.runKey,
              attempt: 0,
              language: input.language,
              setup: prepared.testSetup,
              place: run.place()!,
              baseCommit: prepared.baseCommit,
              ...targetsOf(run),
            },
          ],
        ),
      'tests',
    );
    if (baseline.cannotRun) {
      // Agents cannot change the machine the tests run on: nothing to plan, nothing to learn.
      throw new RunStopped('environment', baseline.cannotRun);
    }
    record.baseline = { passed: baseline.passed, failed: baseline.failed + baseline.errors };
    work.baselineRef = baseline.reportRef;
    record.failingTests = baseline.failingTests ?? [];
    if (baseline.targets) record.targets = baseline.targets;
    run.publish();
    const unknown = baseline.outcome === 'completed' ? (baseline.unknownTargets ?? []) : [];
    if (unknown.length > 0) {
      // Bad input found before any model call: a target no test of the base commit belongs to.
      record.unknownTargets = unknown;
      throw new RunStopped(
        'error',
        `no such test: ${unknown.join(', ')} (a target must name a test or test file that exists at the base commit; ${baseline.passed + baseline.failed + baseline.errors} tests ran there)`,
      );
    }
  }
  const acceptance =
    prepared.workspace ??
    (await run.onHost((host) =>
      host.files.prepareWorkspace.executeWithOptions({ summary: workspaceSummary(planner) }, [
        { ...workspaceStep(run, planner), place: run.place()! },
      ]),
    ));
  work.protectedPaths = acceptance.protectedPaths;
  run.recordCommit(acceptance.commit);
  if (work.protectedPaths.length > 0) work.acceptanceCommit = record.headCommit;
  if (planner && acceptance.openedRef) work.openedTurn = { key: planner.turnKey, ref: acceptance.openedRef };
  return { next: 'PLANNING' };
}

/** The acceptance tests' step: copied and committed, then the Planner's turn opened (when it plans). */
function workspaceStep(run: RunContext, planner: TurnRequest | null): Omit<PrepareWorkspaceInput, 'place'> {
  return {
    testsDir: run.input.testsDir,
    commitMessage: 'aca: acceptance tests given with --tests',
    execution: run.execution,
    ...(planner ? { openAfter: turnOpening(run, planner) } : {}),
  };
}

function workspaceSummary(planner: TurnRequest | null): string {
  return planner ? `prepare workspace · ${openingSummary(planner)}` : 'prepare workspace';
}

async function runSetupCommand(run: RunContext, command: string): Promise<void> {
  const { input, work } = run;
  await run.whenNotPaused();
  const setup = await run.onHost(
    (host) =>
      host.testing.runSetup.executeWithOptions({ summary: `setup · ${command.slice(0, 80)}` }, [
        {
          language: input.language,
          command,
          setup: work.testSetup!,
          network: input.setupNetwork,
          place: run.place()!,
          commitMessage: 'aca: setup command output',
          execution: run.execution,
        },
      ]),
    'tests',
  );
  if (!setup.ok) {
    throw new RunStopped(
      'error',
      `the setup command "${command}" failed (${setup.outcome}${setup.message ? `: ${setup.message}` : ''}); last output:\n${setup.outputTail}`,
    );
  }
  run.recordCommit(setup.commit);
  work.setUp = true;
}

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
  run.commitLater(commitMessage(iteration, 'coder', finish?.summary));
  return { next: 'TESTING' };
}

async function test(run: RunContext): Promise<PhaseOutcome> {
  const { record, input, work } = run;
  const iteration = record.iterations;
  if (work.testsNeeded) {
    work.testPass += 1;
    const tested = await runAgentTurn(run, {
      role: 'tester',
      turnKey: `tester-${work.testPass}`,
      context: { testPass: work.testPass, analysis: record.lastAnalysis },
    });
    const finish = finishedWith(run, tested, 'finish');
    work.testsNeeded = false;
    run.commitLater(commitMessage(iteration, 'tester', finish?.summary));
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
          place: run.place()!,
          acceptanceCommit: run.acceptanceCommitHere(),
          ...(input.repo && record.baseCommit ? { baseCommit: record.baseCommit } : {}),
          ...targetsOf(run),
          ...run.commitFirst(),
          openIfFailed: turnOpening(run, reflectorTurn(run)),
        },
      ]),
    'tests',
  );
  run.committed(report.commit);
  if (report.openedRef) run.work.openedTurn = { key: reflectorTurn(run).turnKey, ref: report.openedRef };
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
    ...reflectorTurn(run),
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
 * The Reflector's turn of this attempt. A failed test run opens it, adding to the context what
 * the report says (its ref, the regressions, the targets' outcomes), as reflect() passes them.
 */
function reflectorTurn(run: RunContext): TurnRequest {
  return { role: 'reflector', turnKey: `reflector-${run.record.iterations}`, context: {} };
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

/** The run's targets for a test run to judge, when it has any. */
function targetsOf(run: RunContext): { targets: string[] } | Record<string, never> {
  const ids = run.targetIds();
  return ids.length ? { targets: ids } : {};
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

/** `aca: attempt 2, coder: <the turn's summary>`: one line, as git log shows it. */
function commitMessage(iteration: number, role: 'coder' | 'tester', summary: string | undefined): string {
  const line =
    (summary ?? '')
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? '';
  const text = line ? line.slice(0, 120) : `${role} turn without a summary`;
  return `aca: attempt ${iteration}, ${role}: ${text}`;
}
