/**
 * Part 5, HumanEval through the whole pipeline. Every problem becomes an aca run
 * (planner, coder, tester, sandboxed pytest, reflector) whose acceptance test
 * (`--tests`) is the problem's check() against solution.py.
 *
 * Offline (default) the scripted model answers with the canonical solution, and
 * for a set fraction with a failing first attempt, a reflection and the fix:
 * every run must then pass (anything less is a harness bug), so the figures are
 * the pipeline's own: iterations, wall time, runs per minute.
 *
 * With --live the same runs go to the model at OPENAI_BASE_URL; pass@1 is then
 * the share of problems whose first coding attempt passes the acceptance test
 * (read from the attempt-1 test report, so tests the model wrote itself cannot
 * hide or fake it), and tokens per solved task is all tokens spent / runs solved.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { safeKey } from '../src/shared/safe-key';
import type { TestRunReport } from '../src/shared/types';
import { runResult, uniqueSuffix, type BenchStack } from './bench-stack';
import { warmUp } from './demo-runs';
import {
  formatPairs,
  formatTable,
  mapPool,
  median,
  round,
  sum,
  withTimeout,
  type BenchIO,
} from './bench-util';
import {
  ACCEPTANCE_CASE,
  ACCEPTANCE_FILE,
  acceptanceTest,
  isWrongFirst,
  loadDataset,
  scriptedScenario,
  taskText,
  type HumanEvalProblem,
} from './humaneval';

export interface HumanEvalOptions {
  dataset: string;
  limit: number | null;
  wrongFraction: number;
  concurrency: number;
  live: boolean;
  /** Live mode: the model to ask for. */
  model: string;
  maxIterations: number;
}

export interface HumanEvalRun {
  taskId: string;
  /** bench-he-<task>-<batch>; left out of the JSON (the batch is at the top). */
  workflowId?: string;
  wrongFirst: boolean | null;
  state: string;
  reason: string | null;
  iterations: number;
  /** The acceptance test passed on the first coding attempt. */
  passedFirstAttempt: boolean;
  /** The run ended SUCCESS with the acceptance test passing in its last test run. */
  solved: boolean;
  tokens: { prompt: number; completion: number };
  latencyMs: number;
  /** What went wrong, for runs that did not go as scripted (left out when null). */
  problem?: string | null;
}

export interface HumanEvalResult {
  part: 'humaneval';
  mode: 'scripted' | 'live';
  dataset: string;
  model: string;
  problems: number;
  wrongFirst: number | null;
  concurrency: number;
  maxIterations: number;
  solved: number;
  allSolved: boolean;
  passAt1: number;
  iterations: { total: number; mean: number; histogram: Record<string, number> };
  wallMs: number;
  runsPerMinute: number;
  latencyP50Ms: number;
  tokens: { prompt: number; completion: number; perSolvedTask: number | null };
  /** Offline: runs that did not do exactly what the script says (must be empty). */
  harnessProblems: string[];
  /** The workflow ids were bench-he-<task id>-<batch>. */
  batch: string;
  runs: HumanEvalRun[];
}

function acceptanceStatus(report: TestRunReport | undefined): 'passed' | 'failed' | 'missing' {
  const c = report?.cases.find((x) => x.name === ACCEPTANCE_CASE);
  if (!c) return 'missing';
  return c.status === 'passed' ? 'passed' : 'failed';
}

export async function runHumanEvalBench(
  stack: BenchStack,
  opts: HumanEvalOptions,
  progress: (m: string) => void,
): Promise<HumanEvalResult> {
  let problems: HumanEvalProblem[] = loadDataset(opts.dataset);
  if (opts.limit !== null) problems = problems.slice(0, opts.limit);
  if (problems.length === 0) throw new Error(`${opts.dataset} holds no problems`);
  stack.llm.setDelay(0);
  // The first run of a fresh worker pays one-time costs (opening failure memory, loading the bundle).
  if (!opts.live) await warmUp(stack, progress);
  const testsRoot = path.join(path.dirname(stack.home), 'humaneval-tests');
  const batch = uniqueSuffix();
  const wrongCount = opts.live ? null : problems.filter((_, i) => isWrongFirst(i, opts.wrongFraction)).length;
  progress(
    `${problems.length} problems from ${opts.dataset}, ${opts.live ? `live model ${opts.model}` : `scripted model, ${wrongCount} wrong first`}, ${opts.concurrency} at a time`,
  );

  let done = 0;
  let solvedSoFar = 0;
  const t0 = performance.now();
  const ticker = setInterval(
    () =>
      progress(
        `${done}/${problems.length} done, ${solvedSoFar} solved, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      ),
    10_000,
  );
  let runs: HumanEvalRun[];
  try {
    runs = await mapPool(problems, opts.concurrency, async (p, i): Promise<HumanEvalRun> => {
      const wrongFirst = opts.live ? null : isWrongFirst(i, opts.wrongFraction);
      const workflowId = `bench-he-${safeKey(p.task_id).replace(/_/g, '-').toLowerCase()}-${batch}`;
      const testsDir = path.join(testsRoot, safeKey(p.task_id));
      fs.mkdirSync(testsDir, { recursive: true });
      fs.writeFileSync(path.join(testsDir, ACCEPTANCE_FILE), acceptanceTest(p));
      const model = opts.live
        ? opts.model
        : stack.scriptedModel(scriptedScenario(p, workflowId, wrongFirst === true), workflowId);
      const record: HumanEvalRun = {
        taskId: p.task_id,
        workflowId,
        wrongFirst,
        state: 'NOT_STARTED',
        reason: null,
        iterations: 0,
        passedFirstAttempt: false,
        solved: false,
        tokens: { prompt: 0, completion: 0 },
        latencyMs: 0,
        problem: null,
      };
      try {
        const run = await stack.start({
          workflowId,
          task: taskText(p),
          model,
          language: 'python',
          testsDir,
          options: { maxIterations: opts.maxIterations, warnAt: opts.maxIterations },
        });
        const result = await withTimeout(runResult(run), (opts.live ? 60 : 10) * 60_000, `run ${workflowId}`);
        record.latencyMs = round(performance.now() - run.startedAt);
        const reports = await stack.testReports(run, result.iterations);
        const first = acceptanceStatus(reports.get(1));
        const last = acceptanceStatus(reports.get(result.iterations));
        Object.assign(record, {
          state: result.state,
          reason: result.reason,
          iterations: result.iterations,
          passedFirstAttempt: first === 'passed',
          solved: result.state === 'SUCCESS' && last === 'passed',
          tokens: result.tokens,
        });
        if (opts.live) {
          // Not a harness problem: what a live model got wrong, kept for reading.
          if (!record.solved)
            record.problem = `${result.state}${result.reason ? ` (${result.reason})` : ''}${result.error ? `: ${result.error}` : ''}`;
        } else {
          const expectedIterations = wrongFirst ? 2 : 1;
          const wrong: string[] = [];
          if (!record.solved)
            wrong.push(
              `ended ${result.state}${result.reason ? ` (${result.reason})` : ''}, acceptance ${last}`,
            );
          if (result.iterations !== expectedIterations)
            wrong.push(`${result.iterations} iterations, expected ${expectedIterations}`);
          if (record.passedFirstAttempt === wrongFirst)
            wrong.push(`first attempt ${first}, expected ${wrongFirst ? 'failed' : 'passed'}`);
          if (wrong.length) {
            const lastReport = reports.get(result.iterations);
            record.problem = `${wrong.join('; ')}${result.error ? `; error: ${result.error}` : ''}${lastReport?.message ? `; tests: ${lastReport.message}` : ''}`;
          }
        }
      } catch (err) {
        record.problem = `harness error: ${(err as Error).message}`;
      }
      done += 1;
      if (record.solved) solvedSoFar += 1;
      if (record.problem && !opts.live) progress(`${p.task_id}: ${record.problem}`);
      return record;
    });
  } finally {
    clearInterval(ticker);
  }
  const wallMs = performance.now() - t0;
  const solved = runs.filter((r) => r.solved).length;
  const histogram: Record<string, number> = {};
  for (const r of runs) histogram[String(r.iterations)] = (histogram[String(r.iterations)] ?? 0) + 1;
  const promptTokens = sum(runs.map((r) => r.tokens.prompt));
  const completionTokens = sum(runs.map((r) => r.tokens.completion));
  const totalIterations = sum(runs.map((r) => r.iterations));
  return {
    part: 'humaneval',
    mode: opts.live ? 'live' : 'scripted',
    dataset: path.basename(opts.dataset),
    model: opts.live ? opts.model : 'scripted (canonical solutions)',
    problems: problems.length,
    wrongFirst: wrongCount,
    concurrency: opts.concurrency,
    maxIterations: opts.maxIterations,
    solved,
    allSolved: solved === problems.length,
    passAt1: round(runs.filter((r) => r.passedFirstAttempt).length / problems.length, 4),
    iterations: { total: totalIterations, mean: round(totalIterations / problems.length, 3), histogram },
    wallMs: round(wallMs),
    runsPerMinute: round((problems.length / wallMs) * 60_000, 1),
    latencyP50Ms: round(median(runs.map((r) => r.latencyMs))),
    tokens: {
      prompt: promptTokens,
      completion: completionTokens,
      perSolvedTask: solved > 0 ? Math.round((promptTokens + completionTokens) / solved) : null,
    },
    harnessProblems: opts.live ? [] : runs.filter((r) => r.problem).map((r) => `${r.taskId}: ${r.problem}`),
    batch,
    runs: runs.map(({ workflowId: _id, problem, ...r }) => ({ ...r, ...(problem ? { problem } : {}) })),
  };
}

export function humanEvalReport(r: HumanEvalResult, io: BenchIO): void {
  io.out(`\n== HumanEval through the whole pipeline (${r.mode}: ${r.model}) ==`);
  const pairs: Array<[string, string | number]> = [
    [
      'dataset',
      `${r.dataset}, ${r.problems} problems${r.wrongFirst !== null ? `, ${r.wrongFirst} with a wrong first attempt` : ''}`,
    ],
    [
      'solved',
      `${r.solved}/${r.problems}${r.mode === 'scripted' ? (r.allSolved ? ' (all, as scripted)' : ' (HARNESS BUG: every scripted run must pass)') : ''}`,
    ],
    ['pass@1', `${round(r.passAt1 * 100, 1)}% (acceptance test passed on the first coding attempt)`],
    [
      'iterations',
      `${r.iterations.total} in all, ${r.iterations.mean} per run; ${Object.entries(r.iterations.histogram)
        .map(([k, v]) => `${v} runs x ${k}`)
        .join(', ')}`,
    ],
    ['wall time', `${round(r.wallMs / 1000, 1)} s, ${r.concurrency} runs at a time`],
    ['throughput', `${r.runsPerMinute} runs/min; median run ${round(r.latencyP50Ms / 1000, 2)} s`],
    [
      'tokens',
      `${r.tokens.prompt} prompt + ${r.tokens.completion} completion; ${r.tokens.perSolvedTask ?? '-'} per solved task${r.mode === 'scripted' ? ' (scripted server estimate)' : ''}`,
    ],
  ];
  for (const line of formatPairs(pairs)) io.out(line);
  if (r.harnessProblems.length) {
    io.out('\nRuns that did not go as scripted:');
    for (const line of formatTable(
      ['run'],
      r.harnessProblems.map((p) => [p]),
    ))
      io.out(`  ${line}`);
  }
}
