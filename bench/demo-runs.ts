/**
 * One demo-scenario run measured end to end: the wall time the client saw, the
 * model calls the scripted server answered for it, and the sandboxed test time
 * from the test reports the runTests activity saved.
 */
import { loadBuiltinScenario } from '../src/llm/scenario';
import type { RunResult } from '../src/shared/run-types';
import type { BenchStack, RunSpec, StartedRun } from './bench-stack';
import { runResult, uniqueSuffix } from './bench-stack';
import { sum, withTimeout } from './bench-util';
import { fetchExecutions, timeBreakdown, type TimeBreakdown } from './history-analysis';

export const DEMO_SCENARIO = 'demo-fizzbuzz';

export interface MeasuredRun {
  workflowId: string;
  run: StartedRun;
  result: RunResult;
  /** Client side: from just before the start request to the result in hand. */
  wallMs: number;
  modelCalls: number;
  /** Sum of durationMs of the run's test reports (the sandboxed pytest runs). */
  testMs: number;
  testRuns: number;
}

/**
 * Starts one demo run under its own scenario alias, so its model calls can be counted; `extra`
 * makes it a `--repo` run.
 */
export async function startDemoRun(
  stack: BenchStack,
  label: string,
  extra: Pick<RunSpec, 'repo' | 'testCommand'> = {},
): Promise<{ run: StartedRun; model: string }> {
  const scenario = loadBuiltinScenario(DEMO_SCENARIO);
  const id = `bench-${label}-${uniqueSuffix()}`;
  const model = stack.scriptedModel(scenario, id);
  const run = await stack.start({
    workflowId: id,
    task: scenario.task ?? DEMO_SCENARIO,
    model,
    language: scenario.language ?? 'python',
    ...extra,
  });
  return { run, model };
}

export async function finishDemoRun(
  stack: BenchStack,
  started: { run: StartedRun; model: string },
  timeoutMs = 10 * 60_000,
): Promise<MeasuredRun> {
  const { run, model } = started;
  const result = await withTimeout(runResult(run), timeoutMs, `run ${run.workflowId}`);
  const wallMs = performance.now() - run.startedAt;
  if (result.state !== 'SUCCESS' || result.iterations !== 2) {
    throw new Error(
      `benchmark run ${run.workflowId} ended ${result.state} (${result.reason ?? ''}) at iteration ${result.iterations}; expected SUCCESS at 2: ${result.error ?? ''}`,
    );
  }
  const modelCalls = stack.llm.requests.filter((r) => r.model === model && r.status === 200).length;
  const reports = await stack.testReports(run, result.iterations);
  return {
    workflowId: run.workflowId,
    run,
    result,
    wallMs,
    modelCalls,
    testMs: sum([...reports.values()].map((r) => r.durationMs)),
    testRuns: reports.size,
  };
}

export async function measureDemoRun(
  stack: BenchStack,
  label: string,
  extra: Pick<RunSpec, 'repo' | 'testCommand'> = {},
): Promise<MeasuredRun> {
  return finishDemoRun(stack, await startDemoRun(stack, label, extra));
}

/** One unmeasured run so bundle loading, first connections and python's page cache do not count. */
export async function warmUp(stack: BenchStack, progress: (m: string) => void): Promise<void> {
  if (stack.warmedUp) return;
  progress('warm-up run (not measured)');
  await measureDemoRun(stack, 'warmup');
  stack.warmedUp = true;
}

const isMemoryActivity = (type: string): boolean => /^(remember|recall)/.test(type);

/**
 * Where a measured run's time beyond (model calls x d + sandboxed test time)
 * went, from its history's event times (ms per component).
 */
export async function overheadOf(
  stack: BenchStack,
  m: MeasuredRun,
  d: number,
): Promise<{
  times: TimeBreakdown;
  overhead: Record<string, number>;
  history: { events: number; bytes: number };
}> {
  const executions = await fetchExecutions(stack.client, m.workflowId, m.run.firstExecutionRunId);
  const times = timeBreakdown(executions);
  const history = {
    events: sum(executions.map((e) => e.events.length)),
    bytes: sum(executions.map((e) => e.bytes)),
  };
  const exec = times.activityExecMs;
  const sumWhere = (keep: (type: string) => boolean) =>
    sum(
      Object.entries(exec)
        .filter(([t]) => keep(t))
        .map(([, ms]) => ms),
    );
  const overhead: Record<string, number> = {
    'model call handling (agentStep time beyond d)': (exec.agentStep ?? 0) - m.modelCalls * d,
    'runTests beyond the sandboxed run (incl. waiting for a test slot)': (exec.runTests ?? 0) - m.testMs,
    'other activities (file tools, open turn, workspace)': sumWhere(
      (t) => t !== 'agentStep' && t !== 'runTests' && !isMemoryActivity(t),
    ),
    'failure-memory activities (recall, writes)': sumWhere(isMemoryActivity),
    'activity tasks waiting for the worker': times.activityQueueMs,
    'workflow tasks waiting for the worker': times.workflowTaskQueueMs,
    'workflow tasks: worker processing and completion': times.workflowTaskMs - times.workflowTaskQueueMs,
    'parallel work counted twice above (memory writes)': -times.overlapMs,
    'covered by no activity or workflow task': times.uncoveredMs,
    'client: start request and result delivery': m.wallMs - times.serverWallMs,
  };
  return { times, overhead, history };
}
