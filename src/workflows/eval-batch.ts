import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  defineQuery,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  metricMeter,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  countOutcome,
  evalChildId,
  NO_COUNTS,
  type EvalBatchInput,
  type EvalBatchRef,
  type EvalCarried,
  type EvalProgress,
  type EvalReport,
  type InstanceOutcome,
} from '../shared/eval-types';
import {
  batchProgress,
  NO_TOKENS,
  renderBatchDetails,
  runNotRun,
  runOutcomeOf,
  type EvalRunOutcome,
} from '../shared/eval-run';
import { codingAgentWorkflow } from './coding-agent';
import { describeFailure } from './describe-failure';
import { runResultOfFailure } from '../shared/run-failure';
import { pauseSignal, resumeSignal } from './signals';
import { isStartTimeout } from './start-timeout';

export const evalProgressQuery = defineQuery<EvalProgress>('evalProgress');

/** Instances one execution starts before it continues as new: about 15 events each. */
const DEFAULT_INSTANCES_PER_EXECUTION = 100;

const steps = proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});
/**
 * An evaluation runs a test command in the sandbox: minutes, heartbeating while it runs, on a
 * host's tests queue like every test run, so that the host's ACA_TEST_SLOTS bounds it. A host
 * whose queue nobody polls for EVAL_START_TIMEOUT is gone: another host is asked for.
 */
function evaluationOn(taskQueue: string, input: EvalBatchInput) {
  return proxyActivities<Activities>({
    taskQueue,
    scheduleToStartTimeout: input.evalStartTimeoutMs ?? EVAL_START_TIMEOUT,
    startToCloseTimeout: '45m',
    heartbeatTimeout: input.evalHeartbeatTimeoutMs ?? '1m',
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 3 },
  });
}
const EVAL_START_TIMEOUT = '10m';
/** Hosts an evaluation is offered to before it counts as an error. */
const EVAL_HOSTS_TRIED = 3;

/**
 * A batch of SWE-bench instances: each one a child run of codingAgentWorkflow (or, evaluating
 * given patches, no run), then evaluated, at most `concurrency` at a time. The child's id is the
 * batch's and the instance's, so a replay or a retry never starts an instance twice. Every
 * `instancesPerExecution` instances the batch waits for those in flight and continues as new,
 * carrying only where it is and its counts; the instances are paged from the batch's store by
 * position. Its input, carried state and history stay bounded whatever the number of instances.
 */
export async function evalBatchWorkflow(input: EvalBatchInput, carried?: EvalCarried): Promise<EvalReport> {
  const state: EvalCarried = carried ?? {
    next: 0,
    counts: NO_COUNTS,
    paused: false,
    stopped: null,
    executions: 0,
  };
  const running = new Set<string>();
  /** The instances of this execution that ended (each counted once). */
  const endedHere = new Set<string>();
  const perExecution = input.instancesPerExecution ?? DEFAULT_INSTANCES_PER_EXECUTION;
  let ended = false;

  const spent = () => state.counts.costUsd;
  const progress = () => batchProgress(input, state, running, ended);
  const publish = () => setCurrentDetails(renderBatchDetails(progress(), input));

  /** A pause, a resume or a cancellation reaches the batch's runs in flight; one already ended is skipped. */
  const toRuns = async (send: (run: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>) => {
    if (input.source !== 'agent') return;
    const runs = [...running].map((id) => getExternalWorkflowHandle(evalChildId(input.batchId, id)));
    await Promise.all(runs.map((run) => send(run).catch(() => undefined)));
  };
  const pausedTo = async (paused: boolean) => {
    if (state.paused === paused || ended) return;
    state.paused = paused;
    publish();
    await toRuns((run) => run.signal(paused ? pauseSignal : resumeSignal));
  };
  setHandler(evalProgressQuery, progress);
  setHandler(pauseSignal, () => pausedTo(true));
  setHandler(resumeSignal, () => pausedTo(false));

  const ends = (outcome: InstanceOutcome) => {
    state.counts = countOutcome(state.counts, outcome);
    endedHere.add(outcome.id);
  };

  const runInstance = async (id: string): Promise<void> => {
    const childId = evalChildId(input.batchId, id);
    let run: EvalRunOutcome | null = null;
    if (input.source === 'agent') run = await runAgent(input, id, childId, spent(), () => state);
    let judged: Pick<InstanceOutcome, 'status' | 'reason'>;
    try {
      judged = await evaluate(input, id, run);
    } catch (err) {
      judged = { status: 'error', reason: `the evaluation failed: ${describeFailure(err)}` };
      await recordError(input, id, judged.reason!, run);
    }
    const outcome = { id, ...judged, costUsd: run?.costUsd ?? 0, tokens: run?.tokens ?? NO_TOKENS };
    ends(outcome);
    countInstance(input.batchId, outcome);
    log.info('instance evaluated', { instance: id, status: outcome.status });
  };

  publish();
  let startedHere = 0;
  // The instances this execution starts, paged from the batch's store: never in the input.
  let page: string[] = [];
  let pageFrom = state.next;
  try {
    while (state.next < input.submitted && state.stopped === null) {
      await condition(() => !state.paused && running.size < input.concurrency);
      if (input.maxCostUsd !== null && spent() >= input.maxCostUsd) {
        state.stopped = 'budget';
        break;
      }
      if (startedHere >= perExecution || (startedHere > 0 && workflowInfo().continueAsNewSuggested)) break;
      if (state.next - pageFrom >= page.length) {
        pageFrom = state.next;
        page = await steps.evalInstanceIds.executeWithOptions({ summary: 'eval · next instances' }, [
          { batch: batchRef(input), from: state.next, count: perExecution },
        ]);
        if (page.length === 0) break;
      }
      const id = page[state.next - pageFrom]!;
      state.next += 1;
      startedHere += 1;
      running.add(id);
      publish();
      // An instance's run and evaluation are not cancelled with the batch: a cancelled batch
      // cancels its runs itself and still records each one's end.
      void CancellationScope.nonCancellable(() => runInstance(id))
        .catch(async (err: unknown) => {
          // Not expected (each step catches its own failure), but an instance must end recorded.
          if (!endedHere.has(id)) {
            const reason = describeFailure(err);
            await recordError(input, id, reason, null);
            ends({ id, status: 'error', reason, costUsd: 0, tokens: NO_TOKENS });
          }
        })
        .finally(() => {
          running.delete(id);
          publish();
        });
    }
    await condition(() => running.size === 0);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    state.stopped = 'cancelled';
    await CancellationScope.nonCancellable(async () => {
      publish();
      await toRuns((run) => run.cancel());
      await condition(() => running.size === 0);
    });
  }
  return CancellationScope.nonCancellable(async () => {
    const more = state.next < input.submitted && state.stopped === null;
    const continued = async () => {
      await condition(allHandlersFinished);
      return continueAsNew<typeof evalBatchWorkflow>(input, { ...state, executions: state.executions + 1 });
    };
    // A batch in the database has its outputs written where they are asked for, so only its last
    // execution reads every result (each one reading them all would grow with the square of its size).
    if (more && input.store === 'database') return continued();
    // Built from the batch's results, where every instance's outcome is kept.
    const report = await steps.writeEvalOutputs.executeWithOptions({ summary: 'eval · write report' }, [
      { batch: batchRef(input) },
    ]);
    if (more) return continued();
    ended = true;
    publish();
    return report;
  });
}

function batchRef(input: EvalBatchInput): EvalBatchRef {
  return { batchId: input.batchId, outDir: input.outDir, store: input.store };
}

/** The instance's evaluation on the tests queue of a host a worker of the shared queue names. */
async function evaluate(
  input: EvalBatchInput,
  id: string,
  run: EvalRunOutcome | null,
): Promise<Pick<InstanceOutcome, 'status' | 'reason'>> {
  for (let tried = 1; ; tried += 1) {
    const queue = await steps.evalTestsQueue.executeWithOptions({ summary: `eval · host for ${id}` }, []);
    try {
      return await evaluationOn(queue, input).evaluateEvalInstance.executeWithOptions(
        { summary: `eval · ${id}` },
        [{ batch: batchRef(input), instanceId: id, source: input.source, modelName: input.modelName, run }],
      );
    } catch (err) {
      if (!isStartTimeout(err) || tried >= EVAL_HOSTS_TRIED) throw err;
      log.warn('no worker took the evaluation: another host is asked', { instance: id, queue });
    }
  }
}

/** An instance that ended without a result of its evaluation gets one saying why, for the report. */
async function recordError(
  input: EvalBatchInput,
  id: string,
  reason: string,
  run: EvalRunOutcome | null,
): Promise<void> {
  await steps.recordEvalError
    .executeWithOptions({ summary: `eval · error ${id}` }, [
      { batch: batchRef(input), instanceId: id, reason, modelName: input.modelName, run },
    ])
    .catch((err: unknown) =>
      log.warn('the error of an instance could not be recorded', { instance: id, err }),
    );
}

/** The instance's child run, started only while the batch is not paused; its end as the batch needs it. */
async function runAgent(
  input: EvalBatchInput,
  id: string,
  childId: string,
  spentBefore: number,
  state: () => EvalCarried,
): Promise<EvalRunOutcome> {
  try {
    const runInput = await steps.evalRunInput.executeWithOptions({ summary: `eval · prepare ${id}` }, [
      {
        batch: batchRef(input),
        instanceId: id,
        template: input.run,
        maxCostUsd: input.maxCostUsd === null ? null : Math.max(input.maxCostUsd - spentBefore, 0),
      },
    ]);
    await condition(() => !state().paused || state().stopped !== null);
    if (state().stopped === 'cancelled')
      return runNotRun(childId, 'the batch was cancelled before the run started');
    // A run that ended FAILED fails its workflow with its RunResult as details: read either way.
    const result = await executeChild(codingAgentWorkflow, {
      workflowId: childId,
      args: [runInput],
      staticSummary: `${id} (batch ${input.batchId})`,
    }).catch((err: unknown) => {
      const failed = runResultOfFailure(err);
      if (failed) return failed;
      throw err;
    });
    return runOutcomeOf(childId, result, state().stopped === 'cancelled' ? 'the batch was cancelled' : null);
  } catch (err) {
    return runNotRun(childId, `the run failed: ${describeFailure(err)}`);
  }
}

// Through the worker runtime's Prometheus endpoint; the SDK skips metrics on replay.
function countInstance(batchId: string, outcome: InstanceOutcome): void {
  metricMeter
    .createCounter('aca_eval_instances', 'instances', 'Evaluated instances by batch and status')
    .add(1, { batch: batchId, status: outcome.status });
  const tokens = outcome.tokens.prompt + outcome.tokens.completion;
  if (tokens > 0) {
    metricMeter
      .createCounter('aca_eval_tokens', 'tokens', 'Model tokens of evaluated instances by batch')
      .add(tokens, { batch: batchId });
  }
}
