/**
 * The evaluation batch's input, progress and report. Type-only apart from pure helpers: the
 * workflow bundle includes this file.
 */
import type { RunOptions } from './run-types';
import type { TokenUsage } from './types';

/** Where each instance's patch comes from: the agent's run, or given patches evaluated alone. */
export type EvalSource = 'agent' | 'gold' | 'empty' | 'file';

/** What every child run shares; the instance adds its task, repository and base commit. */
export interface EvalRunTemplate {
  model: string;
  options: RunOptions;
}

/** Where the workers find a batch's instances and results. */
export type EvalStoreKind = 'folder' | 'database';

/** What a step needs to find a batch's store. */
export interface EvalBatchRef {
  batchId: string;
  outDir: string;
  store: EvalStoreKind;
}

export interface EvalBatchInput {
  batchId: string;
  /** The batch's folder: the outputs, and under `batch/` the instances as frozen at the start. */
  outDir: string;
  /**
   * Where the instances and results are: the batch's folder (one host, or hosts that see it at
   * the same path) or the database of DATABASE_URL (hosts that share no folder). The instances
   * are paged from there by position, never carried in the input.
   */
  store: EvalStoreKind;
  /** Instances the batch runs (those given predictions lack are not submitted). */
  submitted: number;
  /** Every instance the report counts. */
  total: number;
  source: EvalSource;
  /** `model_name_or_path` of predictions.jsonl. */
  modelName: string;
  concurrency: number;
  /** Dollars the whole batch may spend; no instance starts once the runs ended so far cost this much. */
  maxCostUsd: number | null;
  run: EvalRunTemplate;
  /**
   * How long an evaluation may wait for a worker of its host's tests queue before another host is
   * asked (it may be waiting for a test slot), and how long a running one may go without a
   * heartbeat: from the command that started the batch. Absent: 10 minutes and 1 minute.
   */
  evalStartTimeoutMs?: number;
  evalHeartbeatTimeoutMs?: number;
  /** Instances started by one execution before it continues as new (history stays bounded). */
  instancesPerExecution?: number;
}

export type InstanceStatus = 'resolved' | 'unresolved' | 'empty_patch' | 'error';

/** One instance's end as the batch keeps it; details are in `batch/results/<id>.json`. */
export interface InstanceOutcome {
  id: string;
  status: InstanceStatus;
  /** Why it is not resolved, in one line (a patch that did not apply, a timeout, a run error). */
  reason: string | null;
  costUsd: number;
  tokens: { prompt: number; completion: number };
}

/** How many instances ended in each status, and what their runs cost. */
export interface EvalCounts {
  done: number;
  resolved: number;
  unresolved: number;
  emptyPatch: number;
  errors: number;
  costUsd: number;
  tokens: { prompt: number; completion: number };
}

/**
 * What the batch carries into its next execution at continue-as-new: where it is and its counts,
 * never the instances' outcomes (those are in the batch's results, see batch-store.ts), so its
 * size does not grow with the number of instances.
 */
export interface EvalCarried {
  next: number;
  counts: EvalCounts;
  paused: boolean;
  /** Set when the budget or a cancellation stopped new instances. */
  stopped: 'budget' | 'cancelled' | null;
  executions: number;
}

export const NO_COUNTS: EvalCounts = {
  done: 0,
  resolved: 0,
  unresolved: 0,
  emptyPatch: 0,
  errors: 0,
  costUsd: 0,
  tokens: { prompt: 0, completion: 0 },
};

/** The counts with one more instance ended. */
export function countOutcome(counts: EvalCounts, outcome: InstanceOutcome): EvalCounts {
  const key = (
    { resolved: 'resolved', unresolved: 'unresolved', empty_patch: 'emptyPatch', error: 'errors' } as const
  )[outcome.status];
  return {
    ...counts,
    done: counts.done + 1,
    [key]: counts[key] + 1,
    costUsd: counts.costUsd + outcome.costUsd,
    tokens: {
      prompt: counts.tokens.prompt + outcome.tokens.prompt,
      completion: counts.tokens.completion + outcome.tokens.completion,
    },
  };
}

export interface EvalProgress {
  batchId: string;
  total: number;
  done: number;
  running: number;
  resolved: number;
  unresolved: number;
  emptyPatch: number;
  errors: number;
  costUsd: number;
  tokens: { prompt: number; completion: number };
  paused: boolean;
  stopped: 'budget' | 'cancelled' | null;
  ended: boolean;
  runningIds: string[];
}

/** report.json: SWE-bench's keys, then cost and tokens. */
export interface EvalReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  submitted_ids: string[];
  completed_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  empty_patch_ids: string[];
  error_ids: string[];
  cost_usd: number;
  tokens: TokenUsage;
  /** Per instance submitted, in report.json (the batch's workflow result leaves it out). */
  instances?: InstanceRow[];
}

/** One instance in report.json: how its run ended and how its tests fared. */
export interface InstanceRow {
  instance_id: string;
  /** How the agent's run ended (`SUCCESS`, `FAILED`, `CANCELLED`…); null without a run. */
  state: string | null;
  /**
   * An error instance's reason; else the reason the run ended with (`max_iterations`, `budget`…);
   * else why the instance is not resolved; null for a resolved instance whose run ended SUCCESS.
   */
  reason: string | null;
  iterations: number;
  cost_usd: number;
  resolved: boolean;
  /** The FAIL_TO_PASS and PASS_TO_PASS tests that did not pass. */
  failed_tests: string[];
}

/** The report of a batch from its instances and the outcomes of those that were submitted. */
export function buildEvalReport(ids: string[], outcomes: InstanceOutcome[]): EvalReport {
  const byId = new Map(outcomes.map((o) => [o.id, o]));
  const ordered = ids.map((id) => byId.get(id)).filter((o): o is InstanceOutcome => o !== undefined);
  const withStatus = (...statuses: InstanceStatus[]) =>
    ordered.filter((o) => statuses.includes(o.status)).map((o) => o.id);
  const submitted = ordered.map((o) => o.id);
  const completed = withStatus('resolved', 'unresolved');
  const resolved = withStatus('resolved');
  const unresolved = withStatus('unresolved');
  const empty = withStatus('empty_patch');
  const errors = withStatus('error');
  return {
    total_instances: ids.length,
    submitted_instances: submitted.length,
    completed_instances: completed.length,
    resolved_instances: resolved.length,
    unresolved_instances: unresolved.length,
    empty_patch_instances: empty.length,
    error_instances: errors.length,
    submitted_ids: submitted,
    completed_ids: completed,
    resolved_ids: resolved,
    unresolved_ids: unresolved,
    empty_patch_ids: empty,
    error_ids: errors,
    cost_usd: Math.round(ordered.reduce((sum, o) => sum + o.costUsd, 0) * 1e6) / 1e6,
    tokens: {
      prompt: ordered.reduce((sum, o) => sum + o.tokens.prompt, 0),
      completion: ordered.reduce((sum, o) => sum + o.tokens.completion, 0),
    },
  };
}

/** The child run's workflow id: one per instance and batch, so no instance runs twice. */
export function evalChildId(batchId: string, instanceId: string): string {
  return `${batchId}/${instanceId}`;
}

export const EVAL_WORKFLOW_TYPE = 'evalBatchWorkflow';
