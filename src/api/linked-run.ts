/**
 * Runs started from an earlier run's state: `aca continue`, `aca retry` and `aca fork`. What they
 * take over is read from the earlier run's result and its workflow history (every execution of a
 * run that continued as new): its input, its plan and the analysis of each attempt. Nothing is
 * started until every check has passed.
 */
import { newRunId } from './run-ids';
import type { Client } from '@temporalio/client';
import type { AcaConfig } from '../config';
import { RunStateError, UserInputError } from '../shared/errors';
import type { RunInput, RunLink, RunResult } from '../shared/run-types';
import { passRateText } from '../shared/pass-rate';
import type { Analysis, Plan, TurnFinish } from '../shared/types';
import { completedActivities, decodePayload, type HistoryEvent } from './history-payloads';
import { gitDirWithCommit, isValidBranchName, runBranch } from '../repo';
import { costBudget } from '../llm/cost-budget';
import { checkInstructions, type ValidRunRequest } from './run-request';
import { checkTaskSize } from '../shared/task-size';

/** What a linked run needs to know of the run it comes from. */
export interface EarlierRun {
  input: RunInput;
  result: RunResult;
  plan: Plan | null;
  /** The analysis of each attempt the earlier run reflected on, by attempt. */
  analyses: Map<number, Analysis>;
  /** The stored report of its baseline, for a `--repo` run. */
  baselineRef: string | null;
}

/** Reads an ended run's input, result, plan and analyses from its histories. */
export async function readEarlierRun(client: Client, id: string, result: RunResult): Promise<EarlierRun> {
  const handle = client.workflow.getHandle(id);
  let runId: string | undefined = (await handle.describe()).runId;
  let input: RunInput | null = null;
  let plan: Plan | null = null;
  let baselineRef: string | null = null;
  const analyses = new Map<number, Analysis>();
  // Newest execution first; what an older execution found never overrides a newer one.
  while (runId) {
    const events: HistoryEvent[] = (await client.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes;
    const args = started?.input?.payloads ?? [];
    input ??= decodePayload(args[0]) as RunInput;
    const carried = decodePayload(args[1]) as
      { work?: { plan?: Plan | null; baselineRef?: string | null } } | undefined;
    plan ??= carried?.work?.plan ?? null;
    baselineRef ??= carried?.work?.baselineRef ?? null;
    for (const step of completedActivities(events)) {
      const ref = (step.input as { ref?: string } | undefined)?.ref ?? '';
      const turn = ref.slice(ref.lastIndexOf('/') + 1);
      if (step.type === 'agentStep') {
        const finished = (step.result as { finished?: TurnFinish | null } | undefined)?.finished;
        if (finished?.tool === 'submit_plan' && turn === 'planner') plan ??= finished.plan;
        const attempt = /^reflector-(\d+)$/.exec(turn)?.[1];
        if (finished?.tool === 'submit_analysis' && attempt && !analyses.has(Number(attempt))) {
          analyses.set(Number(attempt), finished.analysis);
        }
      }
      if (step.type === 'runTests' && (step.input as { attempt?: number } | undefined)?.attempt === 0) {
        baselineRef ??= (step.result as { reportRef?: string | null } | undefined)?.reportRef ?? null;
      }
    }
    runId = started?.continuedExecutionRunId || undefined;
  }
  if (!input) throw new RunStateError(id, `the history of run ${id} has no input`);
  return { input, result, plan, analyses, baselineRef };
}

/**
 * What a linked run may change of the earlier run's settings; each absent one is taken over.
 * `maxIterations` counts the new run's own attempts, from the one it starts at.
 */
export interface LinkOverrides {
  maxIterations?: number;
  model?: string;
  maxCostUsd?: number;
  onLimit?: 'fail' | 'ask';
  /** The user's own instructions for every agent, in place of the earlier run's (see StartRunRequest). */
  instructions?: string;
}

export type LinkRequest = (
  | { kind: 'continue'; instruction: string }
  | { kind: 'retry' }
  | { kind: 'fork'; at: number; feedback?: string }
) & { overrides?: LinkOverrides };

/**
 * The checked request of a linked run: its id, and its input made from the earlier run's.
 * A RunStateError says why the earlier run cannot be gone on from that way.
 */
export async function linkedRunRequest(
  earlier: EarlierRun,
  request: LinkRequest,
  config: AcaConfig,
  id?: string,
): Promise<ValidRunRequest> {
  const { input, result } = earlier;
  const parentRun = result.workflowId;
  if (!result.place || !result.baseCommit || !result.headCommit) {
    throw new RunStateError(parentRun, `run ${parentRun} ended before it had a repository to go on from`);
  }
  let startCommit = result.headCommit;
  let attemptsBefore = 0;
  let analysis: Analysis | null = null;
  let maxIterations = input.options.maxIterations;
  let task = input.task;
  let feedback: string | null = null;
  switch (request.kind) {
    case 'continue': {
      task = request.instruction.trim();
      if (!task) throw new UserInputError('the instruction is empty: aca continue <id> "<instruction>"');
      checkTaskSize(task);
      break;
    }
    case 'retry': {
      if (result.state !== 'FAILED') {
        throw new RunStateError(
          parentRun,
          `run ${parentRun} ended ${result.state}: aca retry goes on from a FAILED run; aca continue ${parentRun} "<instruction>" goes on from this one`,
        );
      }
      attemptsBefore = result.iterations;
      analysis = result.lastAnalysis ?? earlier.analyses.get(result.iterations) ?? null;
      maxIterations = attemptsBefore + input.options.maxIterations;
      break;
    }
    case 'fork': {
      const k = request.at;
      if (!Number.isInteger(k) || k < 1 || k > result.iterations) {
        throw new RunStateError(
          parentRun,
          `run ${parentRun} never reached attempt ${k}: it made ${result.iterations} attempt${result.iterations === 1 ? '' : 's'}`,
        );
      }
      attemptsBefore = k - 1;
      if (k === 1) startCommit = result.baseCommit;
      else {
        const before = result.attempts.find((a) => a.iteration === k - 1);
        if (!before) throw new RunStateError(parentRun, `run ${parentRun} has no commit of attempt ${k - 1}`);
        startCommit = before.commit;
      }
      analysis = k === 1 ? null : (earlier.analyses.get(k - 1) ?? null);
      maxIterations = Math.max(input.options.maxIterations, k);
      if (request.feedback !== undefined) {
        feedback = request.feedback.trim();
        if (!feedback) throw new UserInputError('the feedback text is empty');
      }
      break;
    }
  }
  const overrides = request.overrides ?? {};
  if (overrides.maxIterations !== undefined) {
    if (!Number.isSafeInteger(overrides.maxIterations) || overrides.maxIterations < 1) {
      throw new UserInputError(
        `--max-iterations must be a whole number of at least 1, got "${String(overrides.maxIterations)}"`,
      );
    }
    maxIterations = attemptsBefore + overrides.maxIterations;
  }
  if (overrides.onLimit !== undefined && overrides.onLimit !== 'fail' && overrides.onLimit !== 'ask') {
    throw new UserInputError(`--on-limit must be "fail" or "ask", got "${String(overrides.onLimit)}"`);
  }
  if (overrides.model !== undefined && !overrides.model.trim()) throw new UserInputError('--model is empty');
  const instructions =
    overrides.instructions === undefined ? input.instructions : checkInstructions(overrides.instructions);
  const model = overrides.model?.trim() ?? input.model;
  // A budget taken over must still be priced for a model the new run changes to.
  const maxCostUsd =
    overrides.maxCostUsd !== undefined || overrides.model !== undefined
      ? costBudget(overrides.maxCostUsd ?? input.options.maxCostUsd ?? undefined, model, config)
      : input.options.maxCostUsd;
  const readable = await gitDirWithCommit(config.gitStore, config.home, {
    place: result.place,
    repo: result.repo,
    commit: startCommit,
  });
  if (!readable) {
    throw new RunStateError(
      parentRun,
      `the commit run ${parentRun} would go on from (${startCommit.slice(0, 10)}) is gone from ${result.place.commonDir}${config.gitStore.isDefault ? '' : ` and from the git store ${config.gitStore.display}`}; was the run discarded?`,
    );
  }
  const workflowId = id?.trim() || newRunId(`${request.kind} ${parentRun}`);
  if (!(await isValidBranchName(runBranch(workflowId)))) {
    throw new UserInputError(
      `the run id "${workflowId}" cannot name a git branch (aca/<id>); choose another --id`,
    );
  }
  const link: RunLink = {
    kind: request.kind,
    parentRun,
    parentTask: input.task,
    startCommit,
    parentPlace: result.place,
    baseCommit: result.baseCommit,
    plan: earlier.plan,
    analysis,
    attemptsBefore,
    done: request.kind === 'continue' ? describeDone(result) : null,
    baseline:
      result.baseline && earlier.baselineRef ? { ref: earlier.baselineRef, summary: result.baseline } : null,
    feedback,
  };
  return {
    workflowId,
    warnings: [],
    input: {
      ...hostFree(input),
      task,
      model,
      options: {
        ...input.options,
        maxIterations,
        warnAt: Math.min(input.options.warnAt, maxIterations),
        maxCostUsd,
        ...(overrides.onLimit !== undefined ? { onLimit: overrides.onLimit } : {}),
      },
      ...(instructions === undefined ? {} : { instructions }),
      link,
    },
  };
}

/** How the earlier run ended and what it changed, in a few lines for a continued run's agents. */
function describeDone(result: RunResult): string {
  const ending =
    result.state === 'SUCCESS'
      ? 'It ended SUCCESS'
      : `It ended ${result.state} (${result.reason ?? 'unknown'})`;
  const lines = [
    `${ending} after ${result.iterations} attempt${result.iterations === 1 ? '' : 's'}, pass rate ${passRateText(result.passRate, result.tests)}.`,
  ];
  const files = result.changedFiles
    .slice(0, 30)
    .map((f) => `${f.status} ${f.path} (+${f.added} -${f.removed})`);
  if (files.length)
    lines.push(`Changed files: ${files.join(', ')}${result.changedFiles.length > 30 ? ', …' : ''}`);
  if (result.state !== 'SUCCESS' && result.lastAnalysis)
    lines.push(`Its last analysis: ${result.lastAnalysis.rootCause}`);
  return lines.join('\n');
}

/**
 * The earlier run's input without the place it named on its host (its `--workspace`): the host
 * that prepares the new run decides.
 */
function hostFree(input: RunInput): RunInput {
  const { workspace: _workspace, ...rest } = input;
  return rest;
}
