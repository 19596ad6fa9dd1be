/**
 * The overhead part's tables: every run, then the builds side by side at each model step delay
 * (ratio, orchestration cost per model step, history events per run), where the time above the
 * floor went and the activities' time, and the goal.
 */
import { formatPairs, formatTable, goalText, round, type BenchIO } from './bench-util';
import type { OverheadAtDelay, OverheadBuild, OverheadResult } from './overhead-bench';

interface Column {
  build: OverheadBuild;
  at: OverheadAtDelay;
}

function columns(r: OverheadResult): Column[] {
  return r.delays.flatMap((_, i) => r.builds.map((build) => ({ build, at: build.byDelay[i] })));
}

const heading = (c: Column): string => `${c.build.label.split(' ')[0]} @ ${c.at.delayMs} ms`;

/** Rows named by the union of `keys` over the columns, a cell per column. */
function unionRows(
  cols: Column[],
  cells: (c: Column) => Record<string, number | string>,
): Array<Array<string | number>> {
  const keys = [...new Set(cols.flatMap((c) => Object.keys(cells(c))))];
  return keys.map((k) => [k, ...cols.map((c) => cells(c)[k] ?? '-')]);
}

export function overheadReport(r: OverheadResult, io: BenchIO): void {
  io.out(`\n== Orchestration overhead: ${r.scenario}, model steps of ${r.delays.join(' and ')} ms ==`);
  io.out(`builds: ${r.builds.map((b) => b.label).join(', ')}; ${r.order}`);
  for (const b of r.builds.filter((x) => !x.sameDependencies))
    io.out(`note: ${b.label} ran on this checkout's node_modules, not its own package-lock.json's`);
  const cols = columns(r);
  for (const line of formatTable(
    [
      'build',
      'd ms',
      'run',
      'wall ms',
      'model calls',
      'tests ms',
      'floor ms',
      'ratio',
      'ms per step',
      'events',
    ],
    cols.flatMap((c) =>
      c.at.runs.map((run, i) => [
        c.build.label.split(' ')[0],
        c.at.delayMs,
        i + 1,
        run.wallMs,
        run.modelCalls,
        run.testMs,
        run.floorMs,
        run.ratio,
        round((run.wallMs - run.floorMs) / run.modelCalls),
        run.historyEvents,
      ]),
    ),
  ))
    io.out(line);

  io.out('\nSide by side (medians per build and model step):');
  for (const line of formatTable(
    [
      'd ms',
      'build',
      'ratio',
      'wall ms',
      'floor ms',
      'orchestration ms per run',
      'ms per model step',
      'history events',
      'history KB',
      'activities',
      'local activities',
      'workflow tasks',
    ],
    cols.map((c) => [
      c.at.delayMs,
      c.build.label,
      c.at.medianRatio,
      c.at.medianWallMs,
      c.at.medianFloorMs,
      c.at.medianOverheadMs,
      c.at.overheadPerModelStepMs,
      c.at.medianHistoryEvents,
      round(c.at.medianHistoryBytes / 1024),
      c.at.medianActivities,
      c.at.medianLocalActivities,
      c.at.medianWorkflowTasks,
    ]),
  ))
    io.out(`  ${line}`);
  if (r.builds.length > 1) {
    const [ours, theirs] = r.builds;
    io.out('');
    for (const [i, d] of r.delays.entries()) {
      const a = ours.byDelay[i];
      const b = theirs.byDelay[i];
      io.out(
        `  at ${d} ms: ratio ${a.medianRatio} against ${b.medianRatio}; ${a.overheadPerModelStepMs} against ${b.overheadPerModelStepMs} ms per model step (${b.overheadPerModelStepMs > 0 ? round(a.overheadPerModelStepMs / b.overheadPerModelStepMs, 2) : '-'} x); ${a.medianHistoryEvents} against ${b.medianHistoryEvents} events per run`,
      );
    }
  }

  io.out('\nTime above the floor, median ms per run (each build reads its own history):');
  for (const line of formatTable(
    ['where', ...cols.map(heading)],
    unionRows(cols, (c) => c.at.medianOverhead),
  ))
    io.out(`  ${line}`);

  io.out('\nActivity execution time by type, median ms per run (count in run 1):');
  for (const line of formatTable(
    ['activity', ...cols.map(heading)],
    unionRows(cols, (c) =>
      Object.fromEntries(
        Object.entries(c.at.medianActivityMs).map(([t, ms]) => [
          t,
          `${ms} (${c.at.runs[0]?.activities[t] ?? 0})`,
        ]),
      ),
    ),
  ))
    io.out(`  ${line}`);

  io.out('');
  const ours = r.builds[0];
  const pairs: Array<[string, string | number]> = ours.byDelay.map((at) => [
    `at ${at.delayMs} ms`,
    `ratio ${at.medianRatio}, ${at.overheadPerModelStepMs} ms per model step, workflow tasks ${at.medianWorkflowTasks} (processing ${at.medianWorkflowTaskProcessingMs} ms per run), CPU per run ${at.medianCpu ? `${at.medianCpu.benchProcessMs} ms bench process, ${at.medianCpu.serverMs ?? '-'} ms server` : 'not measured'}`,
  ]);
  const perStep = ours.byDelay[0]?.medianOverheadMs ?? 0;
  pairs.push(
    [
      'round trip',
      `${r.roundTrips.perActivityMs} ms per activity of an empty workflow calling ${r.roundTrips.activities} in sequence (workflow task ${r.roundTrips.workflowTaskMs} ms; median of ${r.roundTrips.repetitions}): this build's overhead at ${ours.byDelay[0]?.delayMs ?? '-'} ms is ${r.roundTrips.perActivityMs > 0 ? round(perStep / r.roundTrips.perActivityMs, 1) : '-'} of them`,
    ],
    [
      'goal met from',
      `d >= ~${ours.byDelay[0]?.goalMetFromDelayMs ?? '-'} ms per model step (estimate: the overhead does not grow with d)`,
    ],
    ['result', goalText(r.goal)],
  );
  for (const line of formatPairs(pairs)) io.out(line);
}
