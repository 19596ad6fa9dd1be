/**
 * Part 1, orchestration overhead. The demo scenario (two iterations) runs with
 * the scripted model answering every call after a fixed delay d. The run cannot
 * be faster than (model calls x d) + the sandboxed test time measured in the same
 * run; the ratio wall / that floor is the price of orchestration (Temporal round
 * trips, activities, conversation files). Goal: at most 1.10.
 */
import type { BenchStack } from './bench-stack';
import { measureDemoRun, overheadOf, warmUp, DEMO_SCENARIO } from './demo-runs';
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
  /**
   * Estimate: the smallest model latency d at which this overhead (assumed not to
   * depend on d) would meet the goal: d >= (O / (goal - 1) - tests) / calls.
   */
  goalMetFromDelayMs: number;
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
    const m = await measureDemoRun(stack, 'overhead');
    const { times, overhead } = await overheadOf(stack, m, d);
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
    };
    runs.push(run);
    progress(
      `run ${i + 1}/${opts.runs}: wall ${round(m.wallMs)} ms, floor ${round(floorMs)} ms (${m.modelCalls} calls x ${d} ms + tests ${round(m.testMs)} ms), ratio ${run.ratio}`,
    );
  }
  const medianRatio = round(median(runs.map((r) => r.ratio)), 3);
  const keys = Object.keys(runs[0]?.overhead ?? {});
  const overheadMs = median(runs.map((r) => r.wallMs - r.floorMs));
  const calls = median(runs.map((r) => r.modelCalls));
  const tests = median(runs.map((r) => r.testMs));
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
    goalMetFromDelayMs: Math.max(0, Math.round((overheadMs / (OVERHEAD_GOAL - 1) - tests) / calls)),
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
  for (const line of formatPairs([
    ['median ratio', r.medianRatio],
    ['overhead', `${r.medianOverheadMs} ms per run, ${r.overheadPerModelCallMs} ms per model call`],
    [
      'goal met from',
      `d >= ~${r.goalMetFromDelayMs} ms per model call (estimate: the overhead does not grow with d)`,
    ],
    ['result', goalText(r.goal)],
  ]))
    io.out(line);
}
