/**
 * Part 1, orchestration overhead. The demo scenario (two iterations) runs with
 * the scripted model answering every call after a fixed delay d. The run cannot
 * be faster than (model calls x d) + the sandboxed test time measured in the same
 * run; the ratio wall / that floor is the price of orchestration (Temporal round
 * trips, activities, conversation files). Goal: at most 1.10.
 */
import type { BenchStack } from './bench-stack';
import { cpuSplit, sampleCpu } from './cpu-usage';
import { measureDemoRun, overheadOf, warmUp, DEMO_SCENARIO } from './demo-runs';
import { measureRoundTrips, type RoundTrips } from './round-trips';
import {
  formatPairs,
  formatTable,
  goal,
  goalText,
  median,
  round,
  sum,
  type BenchIO,
  type Goal,
} from './bench-util';

export const OVERHEAD_GOAL = 1.1;

export interface OverheadOptions {
  delayMs: number;
  runs: number;
}

export interface OverheadRun {
  workflowId: string;
  wallMs: number;
  serverWallMs: number;
  modelCalls: number;
  testRuns: number;
  testMs: number;
  floorMs: number;
  ratio: number;
  /** Where the time above the floor went (ms). */
  overhead: Record<string, number>;
  activities: Record<string, number>;
  workflowTasks: number;
  localActivities: number;
  /** Execution time (started to closed) by activity type, ms summed over the run. */
  activityMs: Record<string, number>;
  /** Workflow tasks per model step, and their worker processing (started to completed) per task. */
  workflowTasksPerStep: number;
  workflowTaskProcessingMs: number;
  historyEvents: number;
  historyBytes: number;
  historyBytesPerStep: number;
  /**
   * CPU time during the run (ms): this process (the worker, the scripted model and the client)
   * and the Temporal server; null where /proc cannot be read or the server is not this stack's.
   */
  cpu: { benchProcessMs: number; serverMs: number | null } | null;
}

export interface OverheadResult {
  part: 'overhead';
  scenario: string;
  delayMs: number;
  runs: OverheadRun[];
  medianWallMs: number;
  medianRatio: number;
  /** Median over runs of each overhead component (ms). */
  medianOverhead: Record<string, number>;
  /** Median of wall - floor (ms): the orchestration cost of one demo run. */
  medianOverheadMs: number;
  /** The same per model call (ms). */
  overheadPerModelCallMs: number;
  /** Medians over runs: workflow task processing, history and CPU time. */
  medianWorkflowTaskProcessingMs: number;
  medianActivityMs: Record<string, number>;
  medianCpu: { benchProcessMs: number; serverMs: number | null } | null;
  /**
   * Estimate: the smallest model latency d at which this overhead (assumed not to
   * depend on d) would meet the goal: d >= (O / (goal - 1) - tests) / calls.
   */
  goalMetFromDelayMs: number;
  /** An empty workflow's activities in sequence on the same server: Temporal's own cost per step. */
  roundTrips: RoundTrips;
  goal: Goal;
}

export async function runOverheadBench(
  stack: BenchStack,
  opts: OverheadOptions,
  progress: (m: string) => void,
): Promise<OverheadResult> {
  const d = opts.delayMs;
  stack.llm.setDelay(d);
  await warmUp(stack, progress);
  const runs: OverheadRun[] = [];
  for (let i = 0; i < opts.runs; i++) {
    const cpuBefore = sampleCpu(stack.serverPid);
    const m = await measureDemoRun(stack, 'overhead');
    const split = cpuSplit(cpuBefore, sampleCpu(stack.serverPid));
    const { times, overhead, history } = await overheadOf(stack, m, d);
    const processingMs = times.workflowTaskMs - times.workflowTaskQueueMs;
    const floorMs = m.modelCalls * d + m.testMs;
    const run: OverheadRun = {
      workflowId: m.workflowId,
      wallMs: round(m.wallMs),
      serverWallMs: round(times.serverWallMs),
      modelCalls: m.modelCalls,
      testRuns: m.testRuns,
      testMs: round(m.testMs),
      floorMs: round(floorMs),
      ratio: round(m.wallMs / floorMs, 3),
      overhead: Object.fromEntries(Object.entries(overhead).map(([k, v]) => [k, round(v)])),
      activities: times.activityCount,
      workflowTasks: times.workflowTasks,
      localActivities: times.localActivities,
      activityMs: Object.fromEntries(Object.entries(times.activityExecMs).map(([k, v]) => [k, round(v)])),
      workflowTasksPerStep: round(times.workflowTasks / m.modelCalls, 2),
      workflowTaskProcessingMs: round(processingMs),
      historyEvents: history.events,
      historyBytes: history.bytes,
      historyBytesPerStep: Math.round(history.bytes / m.modelCalls),
      cpu: split && {
        benchProcessMs: round(split.benchProcess * 1000),
        serverMs: split.server === null ? null : round(split.server * 1000),
      },
    };
    runs.push(run);
    progress(
      `run ${i + 1}/${opts.runs}: wall ${round(m.wallMs)} ms, floor ${round(floorMs)} ms (${m.modelCalls} calls x ${d} ms + tests ${round(m.testMs)} ms), ratio ${run.ratio}`,
    );
  }
  const medianRatio = round(median(runs.map((r) => r.ratio)), 3);
  const types = [...new Set(runs.flatMap((r) => Object.keys(r.activityMs)))].sort();
  const cpus = runs.map((r) => r.cpu).filter((c) => c !== null);
  const serverCpus = cpus.map((c) => c.serverMs).filter((ms) => ms !== null);
  const keys = Object.keys(runs[0]?.overhead ?? {});
  const overheadMs = median(runs.map((r) => r.wallMs - r.floorMs));
  const calls = median(runs.map((r) => r.modelCalls));
  const tests = median(runs.map((r) => r.testMs));
  const activityCount = sum(Object.values(runs[0]?.activities ?? {}));
  progress(`round trips: an empty workflow calling ${activityCount} empty activities in sequence`);
  const roundTrips = await measureRoundTrips(stack, Math.max(1, activityCount), Math.max(1, opts.runs));
  return {
    part: 'overhead',
    scenario: DEMO_SCENARIO,
    delayMs: d,
    runs,
    medianWallMs: round(median(runs.map((r) => r.wallMs))),
    medianRatio,
    medianOverhead: Object.fromEntries(keys.map((k) => [k, round(median(runs.map((r) => r.overhead[k])))])),
    medianOverheadMs: round(overheadMs),
    overheadPerModelCallMs: round(overheadMs / calls),
    medianWorkflowTaskProcessingMs: round(median(runs.map((r) => r.workflowTaskProcessingMs))),
    medianActivityMs: Object.fromEntries(
      types.map((t) => [t, round(median(runs.map((r) => r.activityMs[t] ?? 0)))]),
    ),
    medianCpu:
      cpus.length === runs.length
        ? {
            benchProcessMs: round(median(cpus.map((c) => c.benchProcessMs))),
            serverMs: serverCpus.length === cpus.length ? round(median(serverCpus)) : null,
          }
        : null,
    goalMetFromDelayMs: Math.max(0, Math.round((overheadMs / (OVERHEAD_GOAL - 1) - tests) / calls)),
    roundTrips,
    goal: goal('wall time / (model calls x d + sandboxed test time)', medianRatio, OVERHEAD_GOAL),
  };
}

export function overheadReport(r: OverheadResult, io: BenchIO): void {
  io.out(`\n== Orchestration overhead: ${r.scenario}, scripted model delay d = ${r.delayMs} ms ==`);
  for (const line of formatTable(
    ['run', 'wall ms', 'model calls', 'tests ms', 'floor ms', 'ratio'],
    r.runs.map((run, i) => [i + 1, run.wallMs, run.modelCalls, run.testMs, run.floorMs, run.ratio]),
  ))
    io.out(line);
  io.out('');
  const activities = r.runs[0] ? sum(Object.values(r.runs[0].activities)) : 0;
  io.out(
    `Time above the floor, median per run (run 1: ${activities} activities, ${r.runs[0]?.localActivities ?? 0} local activities, ${r.runs[0]?.workflowTasks ?? 0} workflow tasks):`,
  );
  const total = r.medianWallMs - median(r.runs.map((run) => run.floorMs));
  for (const line of formatTable(
    ['where', 'ms', 'share'],
    Object.entries(r.medianOverhead).map(([k, v]) => [
      k,
      v,
      total > 0 ? `${Math.round((v / total) * 100)}%` : '-',
    ]),
  ))
    io.out(`  ${line}`);
  io.out('');
  io.out('Activity execution time by type, median per run (ms):');
  for (const line of formatTable(
    ['activity', 'ms', 'count (run 1)'],
    Object.entries(r.medianActivityMs).map(([k, v]) => [k, v, r.runs[0]?.activities[k] ?? 0]),
  ))
    io.out(`  ${line}`);
  io.out('');
  const first = r.runs[0];
  for (const line of formatPairs([
    ['median ratio', r.medianRatio],
    [
      'workflow tasks',
      `${first?.workflowTasksPerStep ?? 0} per model step (run 1: ${first?.workflowTasks ?? 0}); processing ${r.medianWorkflowTaskProcessingMs} ms per run (median), ${first && first.workflowTasks ? round(first.workflowTaskProcessingMs / first.workflowTasks, 1) : 0} ms per task (run 1)`,
    ],
    [
      'history',
      `run 1: ${first?.historyEvents ?? 0} events, ${first?.historyBytes ?? 0} bytes, ${first?.historyBytesPerStep ?? 0} bytes per model step`,
    ],
    [
      'CPU per run',
      r.medianCpu
        ? `bench process (worker, scripted model, client) ${r.medianCpu.benchProcessMs} ms, Temporal server ${r.medianCpu.serverMs ?? '-'} ms (medians)`
        : 'not measured (no /proc)',
    ],
    ['overhead', `${r.medianOverheadMs} ms per run, ${r.overheadPerModelCallMs} ms per model call`],
    [
      'round trip',
      `${r.roundTrips.perActivityMs} ms per activity of an empty workflow calling ${r.roundTrips.activities} in sequence (workflow task ${r.roundTrips.workflowTaskMs} ms; median of ${r.roundTrips.repetitions}): the overhead is ${r.roundTrips.perActivityMs > 0 ? round(r.medianOverheadMs / r.roundTrips.perActivityMs, 1) : '-'} of them`,
    ],
    [
      'goal met from',
      `d >= ~${r.goalMetFromDelayMs} ms per model call (estimate: the overhead does not grow with d)`,
    ],
    ['result', goalText(r.goal)],
  ]))
    io.out(line);
}
