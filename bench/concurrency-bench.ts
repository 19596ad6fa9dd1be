/**
 * Part 2, concurrency. N demo runs start at once on one worker, the scripted model
 * answering after the same delay d as part 1; wall time until the last one ends and
 * runs per minute, for each N. Goal: 50 runs take at most 3x the wall time of 1.
 */
import * as os from 'node:os';
import type { BenchStack } from './bench-stack';
import {
  finishDemoRun,
  overheadOf,
  startDemoRun,
  warmUp,
  DEMO_SCENARIO,
  type MeasuredRun,
} from './demo-runs';
import {
  formatTable,
  mapPool,
  goal,
  goalText,
  median,
  percentile,
  round,
  sum,
  type BenchIO,
  type Goal,
} from './bench-util';
import { cpuSplit, sampleCpu, type CpuSplit } from './cpu-usage';
import { lineChartSvg } from './svg-chart';

export const CONCURRENCY_GOAL = { runs: 50, factor: 3 };
export const DEFAULT_LEVELS = [1, 10, 50, 200];

export interface ConcurrencyOptions {
  delayMs: number;
  levels: number[];
}

export interface ConcurrencyLevel {
  runs: number;
  wallMs: number;
  runsPerMinute: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  modelCalls: number;
  testRuns: number;
  /** Sum of the sandboxed test runs' durations; divided by the wall time it shows how busy the test slots were. */
  testMs: number;
  /**
   * Mean per run of where the time beyond (model calls x d + its own test time)
   * went, from the runs' histories: shows what saturates as concurrency grows.
   */
  meanOverheadPerRun: Record<string, number>;
  /**
   * What this machine cannot beat: the longer of one run's wall time and the CPU its N runs'
   * sandboxed tests need on `cores` cores (N x one lone run's test time / cores). Null without
   * a level of 1 run.
   */
  floorMs: number | null;
  /** CPU seconds spent over the level by the server, this process and the rest (tests); Linux only. */
  cpu: CpuSplit | null;
}

export interface ConcurrencyResult {
  part: 'concurrency';
  scenario: string;
  delayMs: number;
  /** CPU cores of the machine: sandboxed tests are CPU-bound, so they bound the throughput. */
  cores: number;
  levels: ConcurrencyLevel[];
  goal: Goal;
}

export async function runConcurrencyBench(
  stack: BenchStack,
  opts: ConcurrencyOptions,
  progress: (m: string) => void,
): Promise<ConcurrencyResult> {
  stack.llm.setDelay(opts.delayMs);
  await warmUp(stack, progress);
  const levels: ConcurrencyLevel[] = [];
  for (const n of opts.levels) {
    progress(`${n} concurrent run(s): starting`);
    let done = 0;
    const cpuBefore = sampleCpu(stack.serverPid);
    const t0 = performance.now();
    const ticker = setInterval(
      () =>
        progress(
          `${n} concurrent: ${done}/${n} done after ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        ),
      10_000,
    );
    let measured: MeasuredRun[];
    try {
      const started = await Promise.all(
        Array.from({ length: n }, (_, i) => startDemoRun(stack, `conc${n}-${i}`)),
      );
      measured = await Promise.all(
        started.map(async (s) => {
          const m = await finishDemoRun(stack, s, 30 * 60_000);
          done += 1;
          return m;
        }),
      );
    } finally {
      clearInterval(ticker);
    }
    const wallMs = performance.now() - t0;
    const cpu = cpuSplit(cpuBefore, sampleCpu(stack.serverPid));
    progress(`${n} concurrent run(s): done in ${(wallMs / 1000).toFixed(1)} s; reading their histories`);
    const overheads = await mapPool(
      measured,
      8,
      async (m) => (await overheadOf(stack, m, opts.delayMs)).overhead,
    );
    const keys = Object.keys(overheads[0] ?? {});
    const latencies = measured.map((m) => m.wallMs);
    const level: ConcurrencyLevel = {
      runs: n,
      wallMs: round(wallMs),
      runsPerMinute: round((n / wallMs) * 60_000, 1),
      latencyP50Ms: round(median(latencies)),
      latencyP95Ms: round(percentile(latencies, 95)),
      modelCalls: sum(measured.map((m) => m.modelCalls)),
      testRuns: sum(measured.map((m) => m.testRuns)),
      testMs: round(sum(measured.map((m) => m.testMs))),
      meanOverheadPerRun: Object.fromEntries(
        keys.map((k) => [k, round(sum(overheads.map((o) => o[k])) / overheads.length)]),
      ),
      floorMs: null,
      cpu,
    };
    levels.push(level);
    progress(`${n} concurrent run(s): wall ${(wallMs / 1000).toFixed(1)} s, ${level.runsPerMinute} runs/min`);
  }
  const one = levels.find((l) => l.runs === 1);
  const cores = os.cpus().length;
  if (one)
    for (const level of levels)
      level.floorMs = round(Math.max(one.wallMs, (level.runs * one.testMs) / one.runs / cores));
  const fifty = levels.find((l) => l.runs === CONCURRENCY_GOAL.runs);
  const factor = one && fifty ? round(fifty.wallMs / one.wallMs, 2) : null;
  return {
    part: 'concurrency',
    scenario: DEMO_SCENARIO,
    delayMs: opts.delayMs,
    cores,
    levels,
    goal: goal(
      `wall time of ${CONCURRENCY_GOAL.runs} concurrent runs / wall time of 1`,
      factor,
      CONCURRENCY_GOAL.factor,
    ),
  };
}

export function concurrencyReport(r: ConcurrencyResult, io: BenchIO): void {
  io.out(`\n== Concurrency: ${r.scenario} on one worker, scripted model delay d = ${r.delayMs} ms ==`);
  const base = r.levels.find((l) => l.runs === 1)?.wallMs;
  for (const line of formatTable(
    [
      'runs',
      'wall s',
      'x wall(1)',
      'runs/min',
      'p50 run s',
      'p95 run s',
      'model calls',
      'test runs',
      'test busy',
      'floor s',
      'x floor',
    ],
    r.levels.map((l) => [
      l.runs,
      round(l.wallMs / 1000, 2),
      base ? round(l.wallMs / base, 2) : '-',
      l.runsPerMinute,
      round(l.latencyP50Ms / 1000, 2),
      round(l.latencyP95Ms / 1000, 2),
      l.modelCalls,
      l.testRuns,
      `${round(l.testMs / l.wallMs, 2)}x`,
      l.floorMs ? round(l.floorMs / 1000, 2) : '-',
      l.floorMs ? round(l.wallMs / l.floorMs, 2) : '-',
    ]),
  ))
    io.out(line);
  io.out(
    `floor: the longer of one run's wall time and N x one lone run's sandboxed test time / ${r.cores} cores (tests are CPU-bound)`,
  );
  const keys = Object.keys(r.levels[0]?.meanOverheadPerRun ?? {});
  if (keys.length) {
    io.out('');
    io.out('Mean time per run beyond (model calls x d + its own sandboxed test time), ms, by concurrency:');
    for (const line of formatTable(
      ['where', ...r.levels.map((l) => `${l.runs} runs`)],
      keys.map((k) => [k, ...r.levels.map((l) => l.meanOverheadPerRun[k])]),
    ))
      io.out(`  ${line}`);
  }
  if (r.levels.every((l) => l.cpu)) {
    io.out('');
    io.out(`CPU seconds by process over each level (${r.cores} cores):`);
    const perRun = (l: ConcurrencyLevel, v: number | null | undefined): string =>
      v === null || v === undefined ? '-' : `${v} (${round((v * 1000) / l.runs)} ms/run)`;
    for (const line of formatTable(
      ['runs', 'busy cores', 'Temporal server', 'worker + bench process', 'tests and the rest'],
      r.levels.map((l) => [
        l.runs,
        l.cpu!.busyCores,
        perRun(l, l.cpu!.server),
        perRun(l, l.cpu!.benchProcess),
        perRun(l, l.cpu!.testsAndOther),
      ]),
    ))
      io.out(`  ${line}`);
    const fifty = r.levels.find((l) => l.runs === CONCURRENCY_GOAL.runs);
    if (fifty?.cpu && base) {
      const testsAlone = (fifty.cpu.testsAndOther * 1000) / r.cores;
      io.out(
        `  at ${fifty.runs} runs the tests and the rest alone kept ${r.cores} cores busy for ${round(testsAlone / 1000, 1)} s = ` +
          `${round(testsAlone / base, 2)} x wall(1), before any orchestration (server and worker: ${round(
            (fifty.cpu.benchProcess + (fifty.cpu.server ?? 0)) / r.cores,
            1,
          )} s more)`,
      );
    }
  }
  io.out(goalText(r.goal));
}

export function concurrencySvg(r: ConcurrencyResult): string {
  const pts = (f: (l: ConcurrencyLevel) => number): Array<[number, number]> =>
    r.levels.map((l) => [l.runs, f(l)]);
  const base = r.levels.find((l) => l.runs === 1);
  const xs = r.levels.map((l) => l.runs);
  const span: Array<[number, number]> = [
    [Math.min(...xs), 0],
    [Math.max(...xs), 0],
  ];
  return lineChartSvg({
    title: `aca concurrency: demo runs on one worker (scripted model, d = ${r.delayMs} ms)`,
    subtitle: `${goalText(r.goal)}`,
    panels: [
      {
        title: 'Wall time until the last run ends',
        xLabel: 'concurrent runs (log scale)',
        yLabel: 'seconds',
        xLog: true,
        series: [
          { name: 'wall time', color: '#1f77b4', points: pts((l) => l.wallMs / 1000), labels: true },
          ...(base
            ? [
                {
                  name: `goal: ${CONCURRENCY_GOAL.factor} x wall(1)`,
                  color: '#d62728',
                  dashed: true,
                  points: span.map(
                    ([x]) => [x, (CONCURRENCY_GOAL.factor * base.wallMs) / 1000] as [number, number],
                  ),
                },
              ]
            : []),
          { name: 'p50 run latency', color: '#7f7f7f', points: pts((l) => l.latencyP50Ms / 1000) },
        ],
      },
      {
        title: 'Throughput',
        xLabel: 'concurrent runs (log scale)',
        yLabel: 'runs per minute',
        xLog: true,
        series: [{ name: 'runs/min', color: '#2ca02c', points: pts((l) => l.runsPerMinute), labels: true }],
      },
    ],
  });
}
