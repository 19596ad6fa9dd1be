/**
 * Part 1, orchestration overhead. The demo scenario (two iterations) runs with the scripted model
 * answering every call after a fixed delay d, for each d of `--delay-ms` (3 s and 500 ms). The run
 * cannot be faster than (model calls x d) + the sandboxed test time measured in the same run; the
 * ratio wall / that floor is the price of orchestration, and wall - floor per model step is its
 * cost in milliseconds. Goal: at most 1.03 at d = 3 s, a model step of a real model's order.
 *
 * With `--against <commit>`, that commit's build runs the same runs on the same Temporal server
 * from the same process, the two builds' runs interleaved (ABBA) so machine load hits both alike.
 */
import type { BenchStack } from './bench-stack';
import { cpuSplit, sampleCpu } from './cpu-usage';
import { DEMO_SCENARIO, measureDemoRun, overheadOf, warmUp } from './demo-runs';
import { openOtherBuild, thisBuild, type BuildUnderTest } from './other-build';
import { measureRoundTrips, type RoundTrips } from './round-trips';
import { goal, median, round, sum, type Goal } from './bench-util';

export const OVERHEAD_GOAL = 1.03;
/** The model step the goal is measured against (ms). */
export const GOAL_DELAY_MS = 3000;
export const DEFAULT_OVERHEAD_DELAYS = [GOAL_DELAY_MS, 500];

export interface OverheadOptions {
  /** Model step delays d to measure at (ms), in order. */
  delays: number[];
  /** Measured runs per build and delay. */
  runs: number;
  /** A full commit whose build runs beside this one, or null. */
  against: string | null;
  keep: boolean;
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
  /** Where the time above the floor went (ms), by the build's own reading of its history. */
  overhead: Record<string, number>;
  activities: Record<string, number>;
  workflowTasks: number;
  localActivities: number;
  /** Execution time (started to closed) by activity type, ms summed over the run. */
  activityMs: Record<string, number>;
  /** Workflow tasks per model step, and their worker processing (started to completed) per run. */
  workflowTasksPerStep: number;
  workflowTaskProcessingMs: number;
  historyEvents: number;
  historyBytes: number;
  historyBytesPerStep: number;
  /**
   * CPU time during the run (ms): this process (the workers, the scripted models and the client)
   * and the Temporal server; null where /proc cannot be read or the server is not this stack's.
   */
  cpu: { benchProcessMs: number; serverMs: number | null } | null;
}

/** One build's runs at one delay, and their medians. */
export interface OverheadAtDelay {
  delayMs: number;
  runs: OverheadRun[];
  medianWallMs: number;
  medianFloorMs: number;
  medianRatio: number;
  /** Median of wall - floor (ms): the orchestration cost of one demo run. */
  medianOverheadMs: number;
  /** The same per model step (ms): the absolute cost beside the ratio. */
  overheadPerModelStepMs: number;
  medianHistoryEvents: number;
  medianHistoryBytes: number;
  medianWorkflowTasks: number;
  medianActivities: number;
  medianLocalActivities: number;
  medianWorkflowTaskProcessingMs: number;
  /** Median over runs of each overhead component (ms). */
  medianOverhead: Record<string, number>;
  medianActivityMs: Record<string, number>;
  medianCpu: { benchProcessMs: number; serverMs: number | null } | null;
  /**
   * Estimate: the smallest model step d at which this overhead (assumed not to depend on d)
   * would meet the goal: d >= (O / (goal - 1) - tests) / calls.
   */
  goalMetFromDelayMs: number;
}

export interface OverheadBuild {
  label: string;
  commit: string | null;
  /** Whether it ran on node_modules installed for its own package-lock.json. */
  sameDependencies: boolean;
  byDelay: OverheadAtDelay[];
}

export interface OverheadResult {
  part: 'overhead';
  scenario: string;
  delays: number[];
  runsPerDelay: number;
  /** How the builds' runs alternated. */
  order: string;
  /** This build first, then the `--against` one. */
  builds: OverheadBuild[];
  /** An empty workflow's activities in sequence on the same server: Temporal's own cost per step. */
  roundTrips: RoundTrips;
  /** This build's median ratio at d = 3 s; n/a when 3 s was not among the delays. */
  goal: Goal;
}

async function measureRun(build: BuildUnderTest, d: number, serverPid: number | null): Promise<OverheadRun> {
  const { stack, demo } = build;
  const cpuBefore = sampleCpu(serverPid);
  const m = await demo.measureDemoRun(stack, 'overhead');
  const split = cpuSplit(cpuBefore, sampleCpu(serverPid));
  const { times, overhead, history } = await demo.overheadOf(stack, m, d);
  const floorMs = m.modelCalls * d + m.testMs;
  return {
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
    workflowTaskProcessingMs: round(times.workflowTaskMs - times.workflowTaskQueueMs),
    historyEvents: history.events,
    historyBytes: history.bytes,
    historyBytesPerStep: Math.round(history.bytes / m.modelCalls),
    cpu: split && {
      benchProcessMs: round(split.benchProcess * 1000),
      serverMs: split.server === null ? null : round(split.server * 1000),
    },
  };
}

const medianOf = (runs: OverheadRun[], pick: (r: OverheadRun) => number): number =>
  round(median(runs.map(pick)));

export function summarize(delayMs: number, runs: OverheadRun[]): OverheadAtDelay {
  const types = [...new Set(runs.flatMap((r) => Object.keys(r.activityMs)))].sort();
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.overhead)))];
  const cpus = runs.map((r) => r.cpu).filter((c) => c !== null);
  const serverCpus = cpus.map((c) => c.serverMs).filter((ms) => ms !== null);
  const overheadMs = median(runs.map((r) => r.wallMs - r.floorMs));
  const calls = median(runs.map((r) => r.modelCalls));
  const tests = median(runs.map((r) => r.testMs));
  return {
    delayMs,
    runs,
    medianWallMs: medianOf(runs, (r) => r.wallMs),
    medianFloorMs: medianOf(runs, (r) => r.floorMs),
    medianRatio: round(median(runs.map((r) => r.ratio)), 3),
    medianOverheadMs: round(overheadMs),
    overheadPerModelStepMs: round(overheadMs / calls),
    medianHistoryEvents: medianOf(runs, (r) => r.historyEvents),
    medianHistoryBytes: medianOf(runs, (r) => r.historyBytes),
    medianWorkflowTasks: medianOf(runs, (r) => r.workflowTasks),
    medianActivities: medianOf(runs, (r) => sum(Object.values(r.activities))),
    medianLocalActivities: medianOf(runs, (r) => r.localActivities),
    medianWorkflowTaskProcessingMs: medianOf(runs, (r) => r.workflowTaskProcessingMs),
    medianOverhead: Object.fromEntries(keys.map((k) => [k, medianOf(runs, (r) => r.overhead[k] ?? 0)])),
    medianActivityMs: Object.fromEntries(types.map((t) => [t, medianOf(runs, (r) => r.activityMs[t] ?? 0)])),
    medianCpu:
      cpus.length === runs.length
        ? {
            benchProcessMs: round(median(cpus.map((c) => c.benchProcessMs))),
            serverMs: serverCpus.length === cpus.length ? round(median(serverCpus)) : null,
          }
        : null,
    goalMetFromDelayMs: Math.max(0, Math.round((overheadMs / (OVERHEAD_GOAL - 1) - tests) / calls)),
  };
}

/** The goal: this build's median ratio at d = 3 s. */
export function overheadGoal(build: OverheadBuild | undefined): Goal {
  const at = build?.byDelay.find((b) => b.delayMs === GOAL_DELAY_MS);
  const description = `wall time / (model calls x d + sandboxed test time) at d = ${GOAL_DELAY_MS} ms`;
  return goal(at ? description : `${description}: not measured`, at ? at.medianRatio : null, OVERHEAD_GOAL);
}

export async function runOverheadBench(
  stack: BenchStack,
  opts: OverheadOptions,
  progress: (m: string) => void,
): Promise<OverheadResult> {
  const builds: BuildUnderTest[] = [
    { ...thisBuild(), stack, demo: { measureDemoRun, overheadOf, warmUp }, sameDependencies: true },
  ];
  try {
    if (opts.against) {
      builds.push(
        await openOtherBuild(opts.against, {
          progress,
          keepHome: opts.keep,
          temporalAddress: stack.temporalAddress,
        }),
      );
    }
    const warmUpDelay = Math.min(...opts.delays);
    for (const b of builds) {
      b.stack.llm.setDelay(warmUpDelay);
      await b.demo.warmUp(b.stack, (m) => progress(`${b.label}: ${m}`));
    }
    const runs = new Map<string, OverheadRun[]>();
    for (const d of opts.delays) {
      for (const b of builds) b.stack.llm.setDelay(d);
      for (let i = 0; i < opts.runs; i++) {
        // ABBA: each build goes first in every other round, so neither always follows the other.
        const order = i % 2 === 0 ? builds : [...builds].reverse();
        for (const b of order) {
          const run = await measureRun(b, d, stack.serverPid);
          const key = `${b.label}@${d}`;
          runs.set(key, [...(runs.get(key) ?? []), run]);
          progress(
            `${b.label}, d = ${d} ms, run ${i + 1}/${opts.runs}: wall ${run.wallMs} ms, floor ${run.floorMs} ms (${run.modelCalls} calls + tests ${run.testMs} ms), ratio ${run.ratio}, ${round((run.wallMs - run.floorMs) / run.modelCalls)} ms per model step, ${run.historyEvents} events`,
          );
        }
      }
    }
    const results: OverheadBuild[] = builds.map((b) => ({
      label: b.label,
      commit: b.commit,
      sameDependencies: b.sameDependencies,
      byDelay: opts.delays.map((d) => summarize(d, runs.get(`${b.label}@${d}`) ?? [])),
    }));
    const first = results[0].byDelay[0]?.runs[0];
    const activityCount = first ? sum(Object.values(first.activities)) : 1;
    progress(`round trips: an empty workflow calling ${activityCount} empty activities in sequence`);
    const roundTrips = await measureRoundTrips(stack, Math.max(1, activityCount), opts.runs);
    return {
      part: 'overhead',
      scenario: DEMO_SCENARIO,
      delays: opts.delays,
      runsPerDelay: opts.runs,
      order:
        builds.length > 1
          ? 'one process, one Temporal server; per delay, the builds alternate run by run (ABBA)'
          : 'one build',
      builds: results,
      roundTrips,
      goal: overheadGoal(results[0]),
    };
  } finally {
    for (const b of builds.slice(1)) await b.stack.close();
  }
}
