/**
 * CI smoke of `npm run bench`: every part, tiny, in one process against the test run's
 * Temporal server. Asserts that the harness works and writes its results, never
 * how fast anything was (the CI machine's timings mean nothing).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBench } from '../../bench/main';
import type { ConcurrencyResult } from '../../bench/concurrency-bench';
import type { HistoryResult } from '../../bench/history-bench';
import type { HumanEvalResult } from '../../bench/humaneval-bench';
import type { MemoryBenchResult } from '../../bench/memory-bench';
import type { OverheadResult } from '../../bench/overhead-bench';
import type { RepoBenchResult } from '../../bench/repo-bench';
import type { SandboxBenchResult } from '../../bench/sandbox-bench';
import type { RunCommandBenchResult } from '../../bench/run-command';
import type { SearchBenchResult } from '../../bench/search-bench';
import type { StoreBenchResult } from '../../bench/store-bench';
import type { EvalBenchResult } from '../../bench/eval-bench';
import { workflowBundleFile } from '../helpers/agent-harness';
import { getTestTemporal } from '../helpers/temporal-env';

const DATASET = path.resolve(__dirname, '..', '..', '..', 'shared', 'datasets', 'HumanEval.jsonl.gz');

/** Three problems in the dataset's format, for machines without the shared dataset. */
const FALLBACK_PROBLEMS = [
  {
    task_id: 'Smoke/0',
    prompt: 'def add(a: int, b: int) -> int:\n    """Return a + b.\n    >>> add(2, 3)\n    5\n    """\n',
    entry_point: 'add',
    canonical_solution: '    return a + b\n',
    test: 'def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n',
  },
  {
    task_id: 'Smoke/1',
    prompt:
      'def helper(x):\n    return x * 2\n\n\ndef double_all(xs: list) -> list:\n    """Double every item with helper."""\n',
    entry_point: 'double_all',
    canonical_solution: '    return [helper(x) for x in xs]\n',
    // Uses the prompt's helper, as some HumanEval checks do.
    test: 'def check(candidate):\n    assert candidate([1, 2]) == [helper(1), helper(2)]\n',
  },
  {
    task_id: 'Smoke/2',
    prompt: 'def is_even(n: int) -> bool:\n    """True for even n."""\n',
    entry_point: 'is_even',
    canonical_solution: '    return n % 2 == 0\n',
    test: 'def check(candidate):\n    assert candidate(4)\n    assert not candidate(3)\n',
  },
];

const readJson = <T>(dir: string, name: string): T =>
  JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as T;

describe('npm run bench (smoke: every part, tiny)', () => {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bench-smoke-'));
  const stdout: string[] = [];
  const stderr: string[] = [];
  let code: number;
  const bundleBefore = process.env.ACA_WORKFLOW_BUNDLE;

  beforeAll(async () => {
    getTestTemporal(); // fails clearly when the global setup provided no server
    // The test run's workflow bundle, which the other suites share, instead of a webpack run of its own.
    const bundle = await workflowBundleFile();
    if (bundle) process.env.ACA_WORKFLOW_BUNDLE = bundle;
    let dataset = DATASET;
    if (!fs.existsSync(dataset)) {
      dataset = path.join(outDir, 'smoke.jsonl');
      fs.writeFileSync(dataset, FALLBACK_PROBLEMS.map((p) => JSON.stringify(p)).join('\n'));
    }
    code = await runBench(
      [
        'all',
        '--delay-ms',
        // Each scripted model call waits this long: enough to be measured, short over a few hundred calls.
        '10',
        '--runs',
        '1',
        '--levels',
        '1,3',
        '--reps',
        '2',
        '--search-files',
        '300',
        '--repo-files',
        '200',
        '--store-files',
        '200',
        // Past failures the memory part recalls among: enough for recalls to rank lessons.
        '--memory-failures',
        '100',
        '--history',
        'demo',
        '--dataset',
        dataset,
        '--limit',
        '3',
        // floor(3 x 0.4) = 1 problem gets a wrong first attempt, a reflection and the fix.
        '--wrong-fraction',
        '0.4',
        '--out',
        outDir,
      ],
      { out: (l) => stdout.push(l), progress: (l) => stderr.push(l) },
    );
  }, 480_000);

  afterAll(() => {
    if (bundleBefore === undefined) delete process.env.ACA_WORKFLOW_BUNDLE;
    else process.env.ACA_WORKFLOW_BUNDLE = bundleBefore;
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  test('every part ran and the command succeeded', () => {
    if (code !== 0) console.error(`stdout:\n${stdout.join('\n')}\nstderr:\n${stderr.join('\n')}`);
    expect(code).toBe(0);
    expect(stderr.some((l) => l.startsWith('[bench humaneval'))).toBe(true);
    expect(stdout.join('\n')).toContain('== Summary ==');
  });

  test('overhead: a finite ratio and cost per model step from a real measurement', () => {
    const r = readJson<OverheadResult>(outDir, 'overhead.json');
    expect(r.delays).toEqual([10]);
    expect(r.builds).toHaveLength(1);
    const [at] = r.builds[0].byDelay;
    expect(at.delayMs).toBe(10);
    expect(at.runs).toHaveLength(1);
    const run = at.runs[0];
    expect(run.modelCalls).toBeGreaterThan(0);
    expect(run.testRuns).toBe(2);
    expect(run.testMs).toBeGreaterThan(0);
    expect(run.floorMs).toBeCloseTo(run.modelCalls * 10 + run.testMs, 0);
    for (const v of [run.wallMs, run.floorMs, run.ratio, at.medianRatio, at.overheadPerModelStepMs])
      expect(Number.isFinite(v)).toBe(true);
    // One run: its figures are the medians, and the cost per step is the time above the floor per call.
    expect(at.medianRatio).toBe(run.ratio);
    expect(at.overheadPerModelStepMs).toBeCloseTo((run.wallMs - run.floorMs) / run.modelCalls, 0);
    expect(at.medianHistoryEvents).toBe(run.historyEvents);
    // The goal is read at a 3 s model step, which this run did not measure.
    expect(r.goal.met).toBeNull();
    expect(r.goal.description).toMatch(/at d = 3000 ms: not measured/);
    for (const v of Object.values(at.medianOverhead)) expect(Number.isFinite(v)).toBe(true);
    // Workflow tasks and history per model step, read from the run's history.
    expect(run.workflowTasks).toBeGreaterThan(run.modelCalls);
    expect(run.workflowTasksPerStep).toBeCloseTo(run.workflowTasks / run.modelCalls, 1);
    expect(run.historyEvents).toBeGreaterThan(run.workflowTasks);
    expect(run.historyBytes).toBeGreaterThan(0);
    expect(run.historyBytesPerStep).toBe(Math.round(run.historyBytes / run.modelCalls));
    expect(run.activityMs.agentStep).toBeGreaterThan(0);
    // Temporal's own round trip, timed with as many empty activities as the run had.
    const activities = Object.values(run.activities).reduce((a, b) => a + b, 0);
    expect(r.roundTrips).toEqual({
      activities,
      repetitions: 1,
      perActivityMs: expect.any(Number),
      workflowTaskMs: expect.any(Number),
    });
    expect(r.roundTrips.perActivityMs).toBeGreaterThan(0);
    expect(r.roundTrips.workflowTaskMs).toBeGreaterThan(0);
    expect(r.roundTrips.workflowTaskMs).toBeLessThan(r.roundTrips.perActivityMs);
    expect(stdout.join('\n')).toMatch(/Side by side/);
  });

  test('concurrency: one level per requested size, a chart', () => {
    const r = readJson<ConcurrencyResult>(outDir, 'concurrency.json');
    expect(r.levels.map((l) => l.runs)).toEqual([1, 3]);
    for (const l of r.levels) {
      expect(Number.isFinite(l.wallMs) && l.wallMs > 0).toBe(true);
      expect(Number.isFinite(l.runsPerMinute)).toBe(true);
      expect(l.testRuns).toBe(2 * l.runs);
    }
    // The floor of N runs: at least one run's wall time; for one run, exactly that.
    const [one, three] = r.levels;
    expect(one.floorMs).toBe(one.wallMs);
    expect(three.floorMs).toBeGreaterThanOrEqual(one.wallMs);
    expect(r.cores).toBeGreaterThanOrEqual(1);
    // CPU by process, from /proc on Linux (the server share only when the bench started the server).
    if (process.platform === 'linux') {
      for (const l of r.levels) {
        expect(l.cpu).not.toBeNull();
        expect(l.cpu!.benchProcess).toBeGreaterThan(0);
        expect(l.cpu!.busyCores).toBeGreaterThan(0);
        expect(l.cpu!.busyCores).toBeLessThanOrEqual(r.cores + 0.05);
        expect(l.cpu!.testsAndOther).toBeGreaterThanOrEqual(0);
      }
    }
    // The 50-run goal cannot be judged from 1 and 3 runs.
    expect(r.goal.met).toBeNull();
    const svg = fs.readFileSync(path.join(outDir, 'concurrency.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('<polyline');
  });

  test('sandbox: medians and a finite ratio', () => {
    const r = readJson<SandboxBenchResult>(outDir, 'sandbox.json');
    expect(r.runs).toBe(2);
    expect(r.bareMs).toHaveLength(2);
    expect(r.sandboxMs).toHaveLength(2);
    for (const v of [r.bareMedianMs, r.sandboxMedianMs, r.ratio, r.startupMs])
      expect(Number.isFinite(v)).toBe(true);
  });

  test('run-command: medians, and the calls through Temporal', () => {
    const r = readJson<RunCommandBenchResult>(outDir, 'run-command.json');
    expect(r.runs).toBe(2);
    expect(r.sandboxedMs).toHaveLength(2);
    expect(r.asActivity).toMatchObject({ calls: 10, repetitions: 2 });
    for (const v of [
      r.bareMedianMs,
      r.sandboxedMedianMs,
      r.readOnlyMedianMs,
      r.ratio,
      r.asActivity!.perCallMs,
    ])
      expect(Number.isFinite(v)).toBe(true);
  });

  test('memory: the seeded memory, both cases at each level, every recall timed', () => {
    const r = readJson<MemoryBenchResult>(outDir, 'memory.json');
    expect(r.seededFailures).toBe(100);
    expect(r.cases.map((c) => [c.runs, c.sameTask])).toEqual([
      [1, false],
      [1, true],
      [3, false],
      [3, true],
    ]);
    for (const c of r.cases) {
      expect(c.wallMs).toBeGreaterThan(0);
      expect(c.recallMaxMs).toBeGreaterThanOrEqual(c.recallP50Ms);
      expect(Number.isInteger(c.giveUps)).toBe(true);
    }
    // The goal is judged at 200 runs on distinct tasks, a level the smoke does not run.
    expect(r.goal.met).toBeNull();
  });

  test('history: events, bytes and tokens per iteration of the demo run', () => {
    const r = readJson<HistoryResult>(outDir, 'history.json');
    expect(r.runs).toHaveLength(1);
    const run = r.runs[0];
    expect(run.state).toBe('SUCCESS');
    expect(run.iterations).toBe(2);
    expect(run.history.events).toBeGreaterThan(0);
    expect(run.history.bytes).toBeGreaterThan(0);
    expect(run.perIteration.map((p) => p.iteration)).toEqual([0, 1, 2]);
    expect(run.perIteration.every((p) => p.promptTokens > 0)).toBe(true);
    expect(fs.existsSync(path.join(outDir, 'history.svg'))).toBe(true);
  });

  test('humaneval: every scripted run passed, the wrong first attempt took two iterations', () => {
    const r = readJson<HumanEvalResult>(outDir, 'humaneval.json');
    expect(r.problems).toBe(3);
    expect(r.wrongFirst).toBe(1);
    expect(r.harnessProblems).toEqual([]);
    expect(r.solved).toBe(3);
    expect(r.allSolved).toBe(true);
    expect(r.iterations.histogram).toEqual({ '1': 2, '2': 1 });
    expect(r.runs.filter((x) => x.wrongFirst).map((x) => x.iterations)).toEqual([2]);
    expect(Number.isFinite(r.runsPerMinute)).toBe(true);
  });

  test('search: both engines found every needle and were timed', () => {
    const r = readJson<SearchBenchResult>(outDir, 'search.json');
    expect(r.files).toBe(300);
    expect(r.matches).toBe(1);
    expect(r.gitGrepMs).toHaveLength(2);
    expect(r.searchFilesMs).toHaveLength(2);
    expect(r.ratio).toBeGreaterThan(0);
  });

  test('repo: both sides of preparing and of the baseline were timed, the same tests passed', () => {
    const r = readJson<RepoBenchResult>(outDir, 'repo.json');
    expect(r.files).toBe(200);
    expect(r.tests).toBe(25);
    expect(r.testCommand).toContain('pytest');
    for (const side of [r.prepare, r.baseline]) {
      expect(side.bareMs).toHaveLength(2);
      expect(side.acaMs).toHaveLength(2);
      expect(side.ratio).toBeGreaterThan(0);
    }
    expect(r.prepare.resolveMs).toHaveLength(2);
  });

  test('store: both cases ran on one host and with the store, pushed, and a cold worker rebuilt them', () => {
    const r = readJson<StoreBenchResult>(outDir, 'store.json');
    expect(r.cases.map((c) => c.name)).toEqual(['demo', 'repo']);
    expect(r.repoFiles).toBe(200);
    expect(r.repoTests).toBe(25);
    expect(r.repoTestCommand).toContain('pytest');
    for (const c of r.cases) {
      expect(c.reps).toHaveLength(2);
      for (const rep of c.reps) {
        for (const v of [rep.oneHostMs, rep.storeMs, rep.coldOpenMs]) expect(v).toBeGreaterThan(0);
        // prepareRun's push of the base and at least one step's commit.
        expect(rep.pushes).toBeGreaterThanOrEqual(2);
        expect(rep.coldFetchedKiB).toBeGreaterThan(0);
      }
      expect(Number.isFinite(c.storeRatio) && Number.isFinite(c.coldRatio)).toBe(true);
      expect(c.where.length).toBeGreaterThan(0);
    }
    const [demo, repo] = r.cases;
    // The demo's files (fizzbuzz.py and its test), and the repository's with them.
    expect(demo.coldFiles).toBe(2);
    expect(repo.coldFiles).toBe(202);
    expect(demo.firstPush).toBeNull();
    expect(repo.firstPush!.ms).toHaveLength(2);
    expect(typeof r.goal.met).toBe('boolean');
  });

  test('eval: every generated instance resolved at each concurrency, with the history measured', () => {
    const r = readJson<EvalBenchResult>(outDir, 'eval.json');
    expect(r.instances).toBe(3);
    expect(r.levels.map((l) => l.concurrency)).toEqual([1, 3]);
    for (const l of r.levels) {
      expect(l.resolved).toBe(3);
      expect(l.wallMs).toBeGreaterThan(0);
      expect(l.executions).toBe(1);
      expect(l.historyEvents).toBeGreaterThan(0);
    }
    expect(r.singleRunMs).toBeGreaterThan(0);
  });
});
