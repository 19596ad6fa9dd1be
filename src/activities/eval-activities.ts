import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { openBatchStore } from '../eval/open-batch-store';
import type { EvalDatabase } from '../eval/batch-repository';
import { writeBatchOutputs, withoutIds, type InstanceResult, type StoredInstance } from '../eval/batch-store';
import { evaluateInstance } from '../eval/evaluate-instance';
import type { GitStoreLocation } from '../repo';
import { removeRunCheckout, runPatch } from '../eval/run-patch';
import { copyOnThisHost } from '../eval/store-copies';
import type { LimitMaximums } from '../shared/limit-maximums';
import {
  buildEvalReport,
  type EvalBatchRef,
  type EvalReport,
  type EvalRunTemplate,
  type EvalSource,
  type InstanceOutcome,
} from '../shared/eval-types';
import { clipMiddle, oneLine } from '../shared/clip-text';
import { NO_TOKENS, type EvalRunOutcome } from '../shared/eval-run';
import type { RunInput } from '../shared/run-types';
import type { SandboxMode } from '../shared/types';
import { sandboxHeartbeat, withHeartbeats } from './heartbeats';
import { sandboxLimitsOf } from './test-activities';
import { FAILURE_TYPES } from '../shared/failure-types';

export interface EvalActivityDeps {
  sandboxMode: SandboxMode;
  limitMaximums?: LimitMaximums;
  /** This host's task queues: its tests queue takes the evaluations. */
  host: { queues(): { tests: string } };
  /** Batches kept in the database (DATABASE_URL), shared by every host; absent: folders only. */
  evalDatabase?: EvalDatabase;
  /**
   * Where this host keeps its own copies of a batch's repositories (its ACA_HOME), made from the
   * git store when the copy the batch names is not on this host.
   */
  evalHome?: string;
  gitStore?: GitStoreLocation | null;
}

export interface EvalRunInputRequest {
  batch: EvalBatchRef;
  instanceId: string;
  template: EvalRunTemplate;
  /** What is left of the batch's budget when the run starts; null: no budget. */
  maxCostUsd: number | null;
}

export interface EvaluateRequest {
  batch: EvalBatchRef;
  instanceId: string;
  source: EvalSource;
  modelName: string;
  run: EvalRunOutcome | null;
}

/** Caps the diff read from a run's branch; a bigger patch is an error, not a prediction. */
const MAX_PATCH_BYTES = 32 * 1024 * 1024;
/** How much of a run's closing message an error instance's reason carries: its start and its end (the last output). */
const MAX_REASON_MESSAGE_CHARS = 600;

export function createEvalActivities(deps: EvalActivityDeps) {
  const storeOf = (batch: EvalBatchRef) => openBatchStore(batch, deps.evalDatabase);
  return {
    /** The ids of the instances the batch starts from position `from` on, `count` at most. */
    async evalInstanceIds(request: { batch: EvalBatchRef; from: number; count: number }): Promise<string[]> {
      return storeOf(request.batch).submittedIds(request.from, request.count);
    },

    /**
     * The child run of an instance: its task is the problem statement and nothing else of the
     * instance (not the patch, the test patch or the tests), on aca's copy of the repository at
     * the base commit, failure memory off so instances stay independent. No folder of this host:
     * the host that prepares the run puts it under its own workspaces root, in its own copy.
     */
    async evalRunInput(request: EvalRunInputRequest): Promise<RunInput> {
      const stored = await storeOf(request.batch).instance(request.instanceId);
      const { template } = request;
      return {
        task: stored.instance.problem_statement,
        language: stored.language,
        testsDir: null,
        model: template.model,
        options: { ...template.options, maxCostUsd: request.maxCostUsd },
        repo: { path: stored.repoPath, baseCommit: stored.baseCommit, evalCopy: true },
        testCommand: stored.spec?.testCommand ?? null,
        setupCommand: stored.spec?.setupCommand ?? null,
        setupNetwork: false,
        link: null,
        failureMemory: false,
        ...(stored.spec && Object.keys(stored.spec.env).length > 0 ? { testEnv: stored.spec.env } : {}),
      };
    },

    /**
     * The tests queue of the host whose worker takes this step: the evaluation's test run goes
     * there, as every test run does, and waits for one of the host's ACA_TEST_SLOTS.
     */
    async evalTestsQueue(): Promise<string> {
      return deps.host.queues().tests;
    },

    /**
     * Evaluates one instance and writes its result file; an instance already evaluated (a retry
     * after the result was written) gets the result it has.
     */
    async evaluateEvalInstance(
      request: EvaluateRequest,
    ): Promise<Omit<InstanceOutcome, 'costUsd' | 'tokens'>> {
      const { instanceId } = request;
      const store = storeOf(request.batch);
      const done = await store.result(instanceId);
      if (done) return { id: instanceId, status: done.status, reason: done.reason };
      const found = await store.instance(instanceId);
      // The copy the batch names may be on another host: this host's own, from the git store.
      const stored = {
        ...found,
        repoPath: await copyOnThisHost(
          found.repoPath,
          [found.baseCommit],
          deps.evalHome ?? '',
          deps.evalHome ? (deps.gitStore ?? null) : null,
        ),
      };
      const run = request.run;
      const base = unevaluated(instanceId, stored.prediction?.model_name_or_path ?? request.modelName, run);
      const runError = run ? runErrorOf(run) : null;
      if (runError) {
        await store.saveResult({ ...base, status: 'error', reason: runError, model_patch: '' });
        return { id: instanceId, status: 'error', reason: runError };
      }
      const patch = await patchOf(request, stored, deps.gitStore ?? null);
      if (patch === null) {
        const reason = `the run's patch is larger than ${MAX_PATCH_BYTES} bytes`;
        await store.saveResult({ ...base, status: 'error', reason, model_patch: '' });
        return { id: instanceId, status: 'error', reason };
      }
      const ctx = Context.current();
      // At most the batch's concurrency of instances is in flight, each evaluated once: that bounds
      // how many evaluations run at once.
      const evaluation = await withHeartbeats(10_000, () =>
        evaluateInstance({
          instance: stored.instance,
          repoPath: stored.repoPath,
          baseCommit: stored.baseCommit,
          language: stored.language,
          modelPatch: patch,
          spec: stored.spec,
          sandboxMode: deps.sandboxMode,
          limitsOf: (project) => sandboxLimitsOf(project, deps.limitMaximums),
          ...sandboxHeartbeat(),
          signal: ctx.cancellationSignal,
        }),
      );
      await store.saveResult({ ...base, ...evaluation, model_patch: patch });
      if (request.source === 'agent' && run?.place) await removeRunCheckout(run.place);
      return { id: instanceId, status: evaluation.status, reason: evaluation.reason };
    },

    /**
     * The batch's report as it stands, from the results of its instances, its lists of ids left
     * out (they grow with the batch). A batch in its folder gets predictions.jsonl and report.json
     * written there; one in the database is written out by `aca eval` wherever it is asked.
     */
    async writeEvalOutputs(request: { batch: EvalBatchRef }): Promise<EvalReport> {
      const store = storeOf(request.batch);
      if (request.batch.store === 'folder') return writeBatchOutputs(store, request.batch.outDir);
      const ids: string[] = [];
      const outcomes: InstanceOutcome[] = [];
      for await (const { id, result } of store.reportRows()) {
        ids.push(id);
        if (result) outcomes.push(outcomeOf(result));
      }
      return withoutIds(buildEvalReport(ids, outcomes));
    },

    /** The result of an instance that ended without one (its evaluation failed): an error with why. */
    async recordEvalError(request: {
      batch: EvalBatchRef;
      instanceId: string;
      reason: string;
      modelName: string;
      run: EvalRunOutcome | null;
    }): Promise<void> {
      const { instanceId, run } = request;
      const store = storeOf(request.batch);
      if (await store.result(instanceId)) return;
      await store.saveResult({
        ...unevaluated(instanceId, request.modelName, run),
        status: 'error',
        reason: request.reason,
        model_patch: '',
      });
    },
  };
}

function outcomeOf(result: InstanceResult): InstanceOutcome {
  return {
    id: result.instance_id,
    status: result.status,
    reason: result.reason,
    costUsd: result.costUsd ?? 0,
    tokens: result.tokens ?? NO_TOKENS,
  };
}

/**
 * Why an instance whose run could not start, or ended for a reason that is not the model's (its
 * environment, an error), is an error instance; null for a run whose patch is to be evaluated.
 */
export function runErrorOf(run: EvalRunOutcome): string | null {
  if (run.error) return run.error;
  if (run.reason === 'environment' || run.reason === 'error') {
    const message = run.message
      ? `: ${oneLine(clipMiddle(oneLine(run.message), MAX_REASON_MESSAGE_CHARS))}`
      : '';
    return `the run ended ${run.state ?? 'FAILED'} (${run.reason})${message}`;
  }
  return null;
}

async function patchOf(
  request: EvaluateRequest,
  stored: StoredInstance,
  gitStore: GitStoreLocation | null,
): Promise<string | null> {
  switch (request.source) {
    case 'gold':
      return stored.instance.patch;
    case 'empty':
      return '';
    case 'file':
      return stored.prediction?.model_patch ?? '';
    case 'agent': {
      const run = request.run;
      if (!run?.place || !run.baseCommit || !run.headCommit) return '';
      const { place, baseCommit, headCommit } = run;
      return runPatch({ place, baseCommit, headCommit }, stored.repoPath, gitStore, MAX_PATCH_BYTES);
    }
    default:
      throw ApplicationFailure.nonRetryable(
        `unknown patch source ${String(request.source)}`,
        FAILURE_TYPES.badEvalInput,
      );
  }
}

/** An instance's result before its evaluation: what its run (if any) says of it. */
function unevaluated(
  instanceId: string,
  modelName: string,
  run: EvalRunOutcome | null | undefined,
): Omit<InstanceResult, 'status' | 'reason' | 'model_patch'> {
  return {
    instance_id: instanceId,
    model_name_or_path: modelName,
    run: run?.workflowId ?? null,
    runState: run?.state ?? null,
    runReason: run?.reason ?? null,
    iterations: run?.iterations ?? 0,
    costUsd: run?.costUsd ?? 0,
    tokens: run?.tokens ?? NO_TOKENS,
    tests: null,
    testCommand: null,
    testOutcome: null,
    outputTail: null,
    durationMs: 0,
  };
}
