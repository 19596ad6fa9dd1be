/**
 * `npm run bench -- [part ...] [options]`: runs the benchmark parts, prints a table per
 * part, writes JSON (and SVG charts) under bench/results. Parts: overhead,
 * concurrency, sandbox, run-command, search, git, repo, store, memory, history, edit, humaneval, eval; none or `all` runs every one.
 * Progress goes to stderr. Exit code 0 when every part ran and every harness
 * check held (goals are reported, not enforced, unless --strict), 1 otherwise.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BenchFlags } from './bench-options';
import { loadConfig } from '../src/config';
import { UserInputError } from '../src/shared/errors';
import { openBenchStack, type BenchStack } from './bench-stack';
import {
  defaultResultsDir,
  goalText,
  hostInfo,
  progressLogger,
  writeResult,
  type BenchIO,
  type Goal,
} from './bench-util';
import { EDIT_BENCH_MODEL_OPTIONS, editReport, runEditBench } from './edit-bench';
import { concurrencyReport, concurrencySvg, DEFAULT_LEVELS, runConcurrencyBench } from './concurrency-bench';
import { historyReport, historySvg, HISTORY_CASES, runHistoryBench } from './history-bench';
import { humanEvalReport, runHumanEvalBench, type HumanEvalOptions } from './humaneval-bench';
import { DEFAULT_OVERHEAD_DELAYS, runOverheadBench } from './overhead-bench';
import { overheadReport } from './overhead-report';
import { resolveCommit } from './other-build';
import { repoReport, runRepoBench } from './repo-bench';
import { runSandboxBench, sandboxReport } from './sandbox-bench';
import { runCommandReport, runRunCommandBench } from './run-command';
import { gitReport, runGitBench } from './git-bench';
import { runSearchBench, searchReport } from './search-bench';
import { runStoreBench, storeReport } from './store-bench';
import { DEFAULT_MEMORY_LEVELS, DEFAULT_SEEDED_FAILURES, memoryReport, runMemoryBench } from './memory-bench';
import { DEFAULT_EVAL_INSTANCES, DEFAULT_EVAL_LEVELS, evalBenchReport, runEvalBench } from './eval-bench';
import { positiveInteger } from '../src/shared/option-numbers';

export const PARTS = [
  'overhead',
  'concurrency',
  'sandbox',
  'run-command',
  'search',
  'git',
  'repo',
  'store',
  'memory',
  'history',
  'edit',
  'humaneval',
  'eval',
] as const;
export type Part = (typeof PARTS)[number];

export function defaultDatasetPath(): string {
  return path.resolve(__dirname, '..', '..', 'shared', 'datasets', 'HumanEval.jsonl.gz');
}

function nonNegativeInteger(value: string | boolean | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d+$/.test(value.trim())) {
    throw new UserInputError(`--${name} must be a whole number, got "${String(value)}"`);
  }
  return Number(value);
}

function integerList(value: string | boolean | undefined, name: string, fallback: number[]): number[] {
  if (value === undefined) return fallback;
  const items = String(value)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0 || items.some((s) => !/^\d+$/.test(s) || Number(s) < 1)) {
    throw new UserInputError(
      `--${name} must be a comma-separated list of whole numbers >= 1, got "${String(value)}"`,
    );
  }
  return items.map(Number);
}

interface BenchPlan {
  parts: Part[];
  outDir: string;
  /** The model step delay of concurrency and store: the first of --delay-ms, else 500. */
  delayMs: number;
  /** The overhead part's delays: --delay-ms, else 3000 and 500. */
  overheadDelays: number[];
  overheadRuns: number;
  /** The full commit --against names, or null. */
  against: string | null;
  levels: number[];
  /** The memory part's numbers of runs at once: --levels, else 50,100,200. */
  memoryLevels: number[];
  /** Past failures the memory part seeds before its runs: --memory-failures, else 2,000. */
  memoryFailures: number;
  reps: number;
  searchFiles: number;
  /** The repo part's repetitions: --reps, else 5 (each makes a worktree of the whole repository). */
  repoReps: number;
  repoFiles: number;
  /** The store part's repetitions: --reps, else 3 (each is four runs, two of them on the whole repository). */
  storeReps: number;
  storeFiles: number;
  historyCases: string[];
  humaneval: HumanEvalOptions;
  /** The eval part: --limit instances (200) at --levels concurrencies (1,8,32). */
  evalInstances: number;
  evalLevels: number[];
  keep: boolean;
  strict: boolean;
  temporalDbFile: string | null;
}

export function parseBenchArgs(positionals: string[], flags: BenchFlags): BenchPlan {
  const names = positionals.length === 0 || positionals.includes('all') ? [...PARTS] : positionals;
  for (const name of names) {
    if (!(PARTS as readonly string[]).includes(name)) {
      throw new UserInputError(`unknown benchmark part "${name}"; choose from all, ${PARTS.join(', ')}`);
    }
  }
  const parts = PARTS.filter((p) => names.includes(p));
  const live = flags.live === true;
  if (live && parts.some((p) => p !== 'humaneval'))
    throw new UserInputError('--live applies to the humaneval part only: npm run bench -- humaneval --live');
  const config = loadConfig();
  if (live && !config.openaiBaseUrl && !config.openaiApiKey) {
    throw new UserInputError(
      '--live needs a model endpoint: set OPENAI_BASE_URL (and OPENAI_API_KEY if it wants one)',
    );
  }
  const wrongFraction = flags.wrongFraction === undefined ? 0.2 : Number(flags.wrongFraction);
  if (!Number.isFinite(wrongFraction) || wrongFraction < 0 || wrongFraction > 1) {
    throw new UserInputError(
      `--wrong-fraction must be a number from 0 to 1, got "${String(flags.wrongFraction)}"`,
    );
  }
  const historyCases =
    flags.history
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean) ?? Object.keys(HISTORY_CASES);
  for (const c of historyCases) {
    if (!HISTORY_CASES[c])
      throw new UserInputError(
        `unknown history case "${c}"; choose from ${Object.keys(HISTORY_CASES).join(', ')}`,
      );
  }
  const temporalDbFile = flags.temporalDb ? path.resolve(String(flags.temporalDb)) : null;
  if (temporalDbFile && fs.existsSync(temporalDbFile)) {
    throw new UserInputError(
      `--temporal-db ${temporalDbFile} exists; name a new file (it is deleted when the benchmark ends)`,
    );
  }
  const delays =
    flags.delayMs === undefined
      ? null
      : [
          ...new Set(
            String(flags.delayMs)
              .split(',')
              .map((d) => nonNegativeInteger(d.trim(), 'delay-ms', 0)),
          ),
        ];
  if (flags.against !== undefined && !parts.includes('overhead'))
    throw new UserInputError(
      '--against applies to the overhead part: npm run bench -- overhead --against <commit>',
    );
  const against = flags.against === undefined ? null : resolveCommit(String(flags.against));
  const dataset = path.resolve(flags.dataset ?? defaultDatasetPath());
  if (parts.includes('humaneval') && !fs.existsSync(dataset)) {
    throw new UserInputError(`HumanEval dataset ${dataset} does not exist; give one with --dataset FILE`);
  }
  return {
    parts,
    outDir: path.resolve(flags.out ?? defaultResultsDir()),
    delayMs: delays?.[0] ?? 500,
    overheadDelays: delays ?? DEFAULT_OVERHEAD_DELAYS,
    against,
    overheadRuns: positiveInteger(flags.runs, 'runs') ?? 3,
    levels: integerList(flags.levels, 'levels', DEFAULT_LEVELS),
    memoryLevels: integerList(flags.levels, 'levels', DEFAULT_MEMORY_LEVELS),
    memoryFailures: nonNegativeInteger(flags.memoryFailures, 'memory-failures', DEFAULT_SEEDED_FAILURES),
    reps: positiveInteger(flags.reps, 'reps') ?? 9,
    searchFiles: positiveInteger(flags.searchFiles, 'search-files') ?? 20_000,
    repoReps: positiveInteger(flags.reps, 'reps') ?? 5,
    repoFiles: positiveInteger(flags.repoFiles, 'repo-files') ?? 20_000,
    storeReps: positiveInteger(flags.reps, 'reps') ?? 3,
    storeFiles: positiveInteger(flags.storeFiles, 'store-files') ?? 20_000,
    historyCases,
    humaneval: {
      dataset,
      limit: positiveInteger(flags.limit, 'limit') ?? null,
      wrongFraction,
      concurrency: positiveInteger(flags.concurrency, 'concurrency') ?? (live ? 4 : 32),
      live,
      model: flags.model ?? config.model,
      maxIterations: positiveInteger(flags.maxIterations, 'max-iterations') ?? 3,
    },
    evalInstances: positiveInteger(flags.limit, 'limit') ?? DEFAULT_EVAL_INSTANCES,
    evalLevels: integerList(flags.levels, 'levels', DEFAULT_EVAL_LEVELS),
    keep: flags.keep === true,
    strict: flags.strict === true,
    temporalDbFile,
  };
}

export async function benchCommand(parts: string[], flags: BenchFlags, io: BenchIO): Promise<number> {
  const plan = parseBenchArgs(parts, flags);
  const at = new Date().toISOString();
  const sandbox = loadConfig().sandbox;
  const goals: Array<{ part: Part; goal: Goal }> = [];
  const failures: string[] = [];
  const written: string[] = [];
  let stack: BenchStack | null = null;
  const getStack = async (): Promise<BenchStack> => {
    stack ??= await openBenchStack({
      ...(plan.temporalDbFile ? { temporalDbFile: plan.temporalDbFile } : {}),
      progress: progressLogger(io, 'setup'),
      live: plan.humaneval.live,
      keepHome: plan.keep,
      modelOptions: EDIT_BENCH_MODEL_OPTIONS,
    });
    return stack;
  };
  const save = (name: string, data: unknown): void => {
    const meta = {
      at,
      host: hostInfo(),
      sandbox,
      temporal: stack ? { ownDevServer: stack.ownServer, dbFile: stack.temporalDbFile } : null,
    };
    written.push(
      writeResult(plan.outDir, name, typeof data === 'string' ? data : { ...(data as object), ...meta }),
    );
  };

  try {
    for (const part of plan.parts) {
      const progress = progressLogger(io, part);
      progress('starting');
      try {
        switch (part) {
          case 'overhead': {
            const r = await runOverheadBench(
              await getStack(),
              {
                delays: plan.overheadDelays,
                runs: plan.overheadRuns,
                against: plan.against,
                keep: plan.keep,
              },
              progress,
            );
            overheadReport(r, io);
            goals.push({ part, goal: r.goal });
            save('overhead.json', r);
            break;
          }
          case 'concurrency': {
            const r = await runConcurrencyBench(
              await getStack(),
              { delayMs: plan.delayMs, levels: plan.levels },
              progress,
            );
            concurrencyReport(r, io);
            goals.push({ part, goal: r.goal });
            save('concurrency.json', r);
            save('concurrency.svg', concurrencySvg(r));
            break;
          }
          case 'sandbox': {
            const r = await runSandboxBench({ runs: plan.reps }, progress);
            sandboxReport(r, io);
            goals.push({ part, goal: r.goal });
            save('sandbox.json', r);
            break;
          }
          case 'run-command': {
            const r = await runRunCommandBench({ runs: plan.reps }, progress);
            runCommandReport(r, io);
            save('run-command.json', r);
            break;
          }
          case 'search': {
            const r = await runSearchBench({ files: plan.searchFiles, reps: plan.reps }, progress);
            searchReport(r, io);
            goals.push({ part, goal: r.goal });
            save('search.json', r);
            break;
          }
          case 'git': {
            const r = await runGitBench({ calls: Math.max(31, plan.reps) }, progress);
            gitReport(r, io);
            goals.push({ part, goal: r.goal });
            save('git.json', r);
            break;
          }
          case 'repo': {
            const r = await runRepoBench({ files: plan.repoFiles, reps: plan.repoReps }, progress);
            repoReport(r, io);
            goals.push({ part, goal: r.prepare.goal }, { part, goal: r.baseline.goal });
            save('repo.json', r);
            break;
          }
          case 'store': {
            const r = await runStoreBench(
              await getStack(),
              { delayMs: plan.delayMs, reps: plan.storeReps, files: plan.storeFiles, keep: plan.keep },
              progress,
            );
            storeReport(r, io);
            goals.push({ part, goal: r.goal });
            save('store.json', r);
            break;
          }
          case 'memory': {
            const r = await runMemoryBench(
              { levels: plan.memoryLevels, seededFailures: plan.memoryFailures },
              progress,
            );
            memoryReport(r, io);
            goals.push({ part, goal: r.goal });
            save('memory.json', r);
            break;
          }
          case 'history': {
            const r = await runHistoryBench(await getStack(), { cases: plan.historyCases }, progress);
            historyReport(r, io);
            save('history.json', r);
            const svg = historySvg(r);
            if (svg) save('history.svg', svg);
            if (!r.promptsBounded) failures.push('history: prompts grow with the iteration');
            break;
          }
          case 'edit': {
            const r = await runEditBench(await getStack(), progress);
            editReport(r, io);
            save('edit.json', r);
            break;
          }
          case 'eval': {
            const r = await runEvalBench(
              await getStack(),
              { instances: plan.evalInstances, levels: plan.evalLevels },
              progress,
            );
            evalBenchReport(r, io);
            save('eval.json', r);
            break;
          }
          case 'humaneval': {
            const r = await runHumanEvalBench(await getStack(), plan.humaneval, progress);
            humanEvalReport(r, io);
            save(r.mode === 'live' ? 'humaneval-live.json' : 'humaneval.json', r);
            if (r.mode === 'scripted' && (!r.allSolved || r.harnessProblems.length > 0)) {
              failures.push(
                `humaneval: ${r.problems - r.solved} of ${r.problems} scripted runs did not pass, ${r.harnessProblems.length} did not go as scripted`,
              );
            }
            break;
          }
        }
      } catch (err) {
        const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
        io.progress(`[bench ${part}] FAILED: ${message}`);
        failures.push(`${part}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  } finally {
    if (stack) await (stack as BenchStack).close();
  }

  io.out('\n== Summary ==');
  for (const { part, goal } of goals) io.out(`${part.padEnd(12)} ${goalText(goal)}`);
  for (const f of failures) io.out(`FAILED       ${f}`);
  for (const file of written) io.out(`written      ${path.relative(process.cwd(), file) || file}`);
  const missed = goals.some((g) => g.goal.met === false);
  return failures.length > 0 || (plan.strict && missed) ? 1 : 0;
}
