/**
 * An eval batch's instance run as the batch keeps it, and the batch as the Web UI and `aca eval`
 * show it: pure functions the batch workflow uses (no Node built-ins here).
 */
import type { EvalBatchInput, EvalCarried, EvalProgress } from './eval-types';
import type { RunPlace, RunResult } from './run-types';

/** The run whose diff against the base commit is the instance's patch. */
export interface EvalRunOutcome {
  workflowId: string;
  place: RunPlace | null;
  baseCommit: string | null;
  headCommit: string | null;
  /** The run could not be run at all (its start or its workflow failed). */
  error: string | null;
  /** How the run ended (`SUCCESS`, `FAILED`…); null when it did not run. */
  state: string | null;
  /** Why it FAILED (`environment`, `max_iterations`…), with its message when it has one. */
  reason: string | null;
  message: string | null;
  iterations: number;
  costUsd: number;
  tokens: { prompt: number; completion: number };
}

export const NO_TOKENS = { prompt: 0, completion: 0 };

/** An instance's run that never ran, or whose workflow failed without a RunResult. */
export function runNotRun(workflowId: string, error: string): EvalRunOutcome {
  return {
    workflowId,
    place: null,
    baseCommit: null,
    headCommit: null,
    error,
    state: null,
    reason: null,
    message: null,
    iterations: 0,
    costUsd: 0,
    tokens: NO_TOKENS,
  };
}

/** An instance's run that ended with `result`; `error` when the batch cut it short. */
export function runOutcomeOf(workflowId: string, result: RunResult, error: string | null): EvalRunOutcome {
  return {
    workflowId,
    place: result.place,
    baseCommit: result.baseCommit,
    headCommit: result.headCommit,
    error,
    state: result.ended?.status ?? result.state,
    reason: result.reason,
    message: result.error ?? result.ended?.reason ?? null,
    iterations: result.iterations,
    costUsd: result.cost?.usd ?? 0,
    tokens: { prompt: result.tokens.prompt, completion: result.tokens.completion },
  };
}

/** The batch's progress, answered to the `evalProgress` query. */
export function batchProgress(
  input: EvalBatchInput,
  state: EvalCarried,
  running: ReadonlySet<string>,
  ended: boolean,
): EvalProgress {
  return {
    batchId: input.batchId,
    total: input.total,
    ...state.counts,
    running: running.size,
    paused: state.paused,
    stopped: state.stopped,
    ended,
    runningIds: [...running],
  };
}

/** The batch's current details in the Web UI (a markdown list). */
export function renderBatchDetails(p: EvalProgress, input: EvalBatchInput): string {
  const state = p.ended ? 'ENDED' : p.paused ? 'PAUSED (`aca resume` continues the batch)' : 'RUNNING';
  return [
    `- **Batch:** ${state}${p.stopped ? `, no new instance: ${p.stopped === 'budget' ? 'the budget is spent' : 'cancelled'}` : ''}`,
    `- **Instances:** ${p.done}/${p.total} done, ${p.running} running`,
    `- **Resolved:** ${p.resolved}; unresolved ${p.unresolved}; empty patch ${p.emptyPatch}; errors ${p.errors}`,
    `- **Cost:** $${p.costUsd.toFixed(4)}${input.maxCostUsd !== null ? ` of $${input.maxCostUsd}` : ''} (${p.tokens.prompt} prompt, ${p.tokens.completion} completion tokens)`,
    `- **Patches from:** ${input.source === 'agent' ? `the agent (${input.run.model})` : input.source}`,
    `- **Outputs:** ${input.outDir}`,
  ].join('\n');
}
