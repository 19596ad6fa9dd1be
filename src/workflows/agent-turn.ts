import { log } from '@temporalio/workflow';
import type { TurnContext, TurnOpening } from '../activities/agent-activities';
import type { AgentRole, TurnFinish } from '../shared/types';
import type { RunContext } from './run-context';
import { runToolCall } from './tool-calls';
import { instructionsForTurn } from '../shared/turn-instructions';

/** A turn that called its finishing tool, or one that ended without it. */
export type TurnResult = { ok: true; finish: TurnFinish } | { ok: false; error: string };

/** Baseline failures the Planner's first message names; the rest are counted. */
const MAX_BASELINE_FAILURES_TOLD = 30;

/** Steps in a row that only failed, or called nothing, before a turn is given up. */
export const MAX_IDLE_STEPS = 3;

export interface TurnRequest {
  role: AgentRole;
  /** Names the turn's conversation within the run, e.g. `coder-2`. */
  turnKey: string;
  context: Omit<TurnContext, 'role' | 'task' | 'language' | 'attempt' | 'maxIterations' | 'protectedPaths'>;
  /** The Planner's turn: its first step also looks up lessons from similar failures. */
  recallLessons?: boolean;
}

/**
 * One agent turn: model steps, each followed by the workspace tool calls it asked for, until the
 * agent calls its finishing tool, stops making progress or runs out of steps.
 */
export async function runAgentTurn(run: RunContext, request: TurnRequest): Promise<TurnResult> {
  const { input, activities } = run;
  const { role } = request;
  const opening = turnOpening(run, request);
  const { ref } = opening;
  const maxSteps = input.options.maxStepsPerTurn;
  let idleSteps = 0;
  await run.whenNotPaused();
  const opened = await run.onHost((host) =>
    host.files.openTurn.executeWithOptions({ summary: openingSummary(request) }, [
      { open: opening, ...run.hostStep()! },
    ]),
  );
  // The conversation as opened: this execution's, or after a Reset maybe an earlier one's.
  let openedAs = opened.ref;
  // Until a step of this execution has taken the conversation over (a Reset), each one is told
  // where it was; the step that did says so, and a second Reset then takes over from it.
  const takenOver = () => (openedAs === ref ? {} : { openedAs });
  for (let step = 0; step < maxSteps; step++) {
    await run.whenNotPaused();
    const summary = `${role} · model step ${step + 1}`;
    const decision = await activities.agents.agentStep.executeWithOptions({ summary }, [
      {
        ref,
        model: input.model,
        stepIndex: step,
        timeoutMs: input.options.modelTimeoutMs,
        ...takenOver(),
      },
    ]);
    if (decision.ref) openedAs = decision.ref;
    run.countUsage(role, decision.usage, decision.usd);
    let anyToolWorked = false;
    for (const call of decision.toolCalls) {
      await run.whenNotPaused();
      const outcome = await runToolCall(run, role, call, {
        ref,
        toolCallId: call.id,
        execution: run.execution,
        ...takenOver(),
      });
      if (outcome.ref) openedAs = outcome.ref;
      run.recordCommit(outcome.commit);
      anyToolWorked ||= outcome.ok;
    }
    if (decision.finished !== null) return { ok: true, finish: decision.finished };
    const progressed = decision.progress && (anyToolWorked || decision.toolCalls.length === 0);
    idleSteps = progressed ? 0 : idleSteps + 1;
    if (idleSteps >= MAX_IDLE_STEPS) {
      return turnError(
        `${role} made no progress in ${MAX_IDLE_STEPS} steps in a row (only failing calls or no calls)`,
      );
    }
  }
  return turnError(`${role} did not call its finishing tool within ${maxSteps} steps`);
}

/** What the Web UI shows for the opening of a turn. */
function openingSummary(request: TurnRequest): string {
  return request.recallLessons
    ? `${request.role} · recall similar failures, open the turn`
    : `${request.role} · open the turn`;
}

/** What opens a turn: its conversation's ref, the model, and the context its first message is made of. */
function turnOpening(run: RunContext, request: TurnRequest): TurnOpening {
  const { input } = run;
  const link = input.link ?? null;
  // The Coder's context carries the plan itself; the Planner has none yet.
  const planFiles = request.role === 'planner' || request.context.plan ? [] : (run.work.plan?.files ?? []);
  return {
    ref: run.turnRef(request.turnKey),
    model: input.model,
    context: {
      role: request.role,
      task: input.task,
      language: input.language,
      attempt: Math.max(1, run.record.iterations),
      maxIterations: run.record.maxIterations,
      protectedPaths: run.work.protectedPaths,
      ...(input.repo && run.record.testCommand ? { testCommand: run.record.testCommand } : {}),
      ...(link?.kind === 'continue'
        ? { earlier: { run: link.parentRun, task: link.parentTask, done: link.done } }
        : {}),
      ...(request.role === 'planner' ? baselineFailuresOf(run) : {}),
      // Where the project's instructions are read: the base commit, the plan's folders.
      ...(run.record.baseCommit ? { baseCommit: run.record.baseCommit } : {}),
      ...(planFiles.length ? { planFiles } : {}),
      ...(input.instructions ? { instructions: instructionsForTurn(input.instructions) } : {}),
      ...request.context,
    },
    ...(request.recallLessons ? { recallLessons: { workflowId: run.workflowId, task: input.task } } : {}),
    ...(run.work.runCommand === false ? { runCommand: false } : {}),
  };
}

/**
 * What the baseline found failing, for the Planner to name as targets what the task asks to fix:
 * without a target, a test that failed there may still fail when the run ends SUCCESS.
 */
function baselineFailuresOf(run: RunContext): { baselineFailures?: { names: string[]; count: number } } {
  const { baseline, failingTests } = run.record;
  if (!baseline || baseline.failed === 0 || failingTests.length === 0) return {};
  return {
    baselineFailures: {
      names: failingTests.slice(0, MAX_BASELINE_FAILURES_TOLD),
      count: Math.max(baseline.failed, failingTests.length),
    },
  };
}

function turnError(error: string): TurnResult {
  log.warn('agent turn failed', { error });
  return { ok: false, error };
}
