import type { Command } from 'commander';

/** The options of `npm run bench`, as commander hands them to benchCommand (values unparsed). */
export interface BenchFlags {
  delayMs?: string;
  against?: string;
  runs?: string;
  levels?: string;
  reps?: string;
  searchFiles?: string;
  repoFiles?: string;
  storeFiles?: string;
  memoryFailures?: string;
  history?: string;
  dataset?: string;
  limit?: string;
  wrongFraction?: string;
  concurrency?: string;
  live?: boolean;
  model?: string;
  maxIterations?: string;
  out?: string;
  temporalDb?: string;
  keep?: boolean;
  strict?: boolean;
}

const PARTS_HELP = `
Parts:
  overhead     demo scenario, scripted model answering after d ms (3000 and 500): wall / (calls x d + test time),
               orchestration ms per model step, history events per run; goal <= 1.03 at d = 3000;
               --against <commit> runs that commit's build beside this one, runs interleaved
  concurrency  1, 10, 50, 200 demo runs at once on one worker; goal: 50 runs <= 3x the wall time of 1
  sandbox      the same pytest suite bare and in bubblewrap (medians); goal <= 1.10
  search       search_files against git grep on a generated repository of 20,000 files; goal <= 1.20
  git          a git call (rev-parse, status) from a worker-sized process: direct, through the spawn
               helper, and as git.ts makes it; goal: git() <= 5 ms (median)
  repo         on a generated repository of 20,000 files: preparing a --repo run against git worktree add,
               goal <= 1.20; its baseline test run in bubblewrap against bare pytest, goal <= 1.10
  store        the demo run and the demo as a --repo run on 20,000 files, with ACA_GIT_STORE against one
               host; a cold worker bringing the last commit from the store; goal: demo <= 1.10x one host
  memory       embedded failure memory with --memory-failures past failures (2,000), --levels runs at once
               (50,100,200) each creating, recalling, storing: recall latency and give-ups; goal: none at
               200 distinct tasks
  history      history events/bytes and prompt tokens per iteration: demo (2 iterations), long (15)
  edit         one fix in a 5,000-line file: edit_file on a window against reading and rewriting the file; tokens
  humaneval    every HumanEval problem as a run with its check() as acceptance test
  eval         aca eval of --limit generated instances (200) at --levels concurrencies (1,8,32): wall time,
               instances/min, overhead per instance against one plain run, the batch history's size`;

export function addBenchOptions(command: Command): Command {
  return command
    .option(
      '--delay-ms <n,...>',
      'scripted model delay d: overhead measures each (3000,500); concurrency and store use the first (500)',
    )
    .option(
      '--against <commit>',
      "overhead: also measure this commit's build, exported under ~/.cache/aca/bench-builds, its runs interleaved with this build's",
    )
    .option('--runs <n>', 'measured overhead runs, median reported (3)')
    .option('--levels <a,b,...>', 'concurrency levels (1,10,50,200; eval: 1,8,32; memory: 50,100,200)')
    .option('--reps <n>', 'sandbox and search repetitions each side (9); repo (5); store (3)')
    .option('--search-files <n>', 'files in the generated repository of the search part (20000)')
    .option('--repo-files <n>', 'files in the generated repository of the repo part (20000)')
    .option('--store-files <n>', "files in the generated repository of the store part's repo case (20000)")
    .option('--memory-failures <n>', 'past failures the memory part seeds before its runs (2000)')
    .option('--history <cases>', 'history cases: demo, long (both)')
    .option('--dataset <file>', 'HumanEval-format JSONL, gz or plain (../shared/datasets/HumanEval.jsonl.gz)')
    .option('--limit <n>', 'first N HumanEval problems only; instances of the eval part (200)')
    .option('--wrong-fraction <f>', 'share of problems with a wrong first attempt (0.2)')
    .option('--concurrency <n>', 'HumanEval runs at a time (32; 4 with --live)')
    .option('--max-iterations <n>', 'HumanEval iteration limit per run (3)')
    .option('--live', 'HumanEval against OPENAI_BASE_URL (with --model or ACA_MODEL); humaneval only')
    .option('--model <name>', 'model for --live')
    .option('--out <dir>', 'where results go (bench/results)')
    .option(
      '--temporal-db <file>',
      "SQLite file of the bench's own dev server (default: a temporary file; /dev/shm keeps disk syncs out)",
    )
    .option('--keep', 'keep the temporary workspaces, conversations and reports')
    .option('--strict', 'exit 1 when a goal is missed')
    .addHelpText('after', PARTS_HELP);
}
