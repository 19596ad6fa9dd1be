/**
 * Failure memory on the embedded database (PGlite) under many runs at once: a memory seeded with
 * 2,000 past failures, then N runs started together, each doing what a run does to memory
 * (create its task, recall lessons, log an iteration, store a failure, set its status). For each
 * N at --levels (50,100,200), two cases: every run on its own task, and every run on the same
 * task (a batch or a benchmark of one task). Reported: recall latency and the recalls that a
 * Planner would have given up on (no answer within RECALL_WAIT_MS). Goal: no give-up at 200 runs
 * on distinct tasks.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RECALL_WAIT_MS } from '../src/activities/memory-activities';
import type { FailureMemory } from '../src/memory/failure-repository';
import { openFailureMemory } from '../src/memory/open-memory';
import { formatTable, goal, goalText, median, percentile, type BenchIO, type Goal } from './bench-util';

export const DEFAULT_MEMORY_LEVELS = [50, 100, 200];
export const DEFAULT_SEEDED_FAILURES = 2_000;
const GOAL_RUNS = 200;

const WORDS = (
  'parse csv quoted field comma escape linked list reverse binary tree balance http retry timeout ' +
  'json schema date timezone leap year fibonacci memo cache lru sort merge heap queue stack graph ' +
  'bfs dfs path dijkstra regex token lexer parser matrix prime sieve string palindrome anagram'
).split(' ');

/** `n` words picked deterministically from `seed`: tasks that overlap like real ones do. */
function words(n: number, seed: number): string {
  return Array.from({ length: n }, (_, i) => WORDS[(seed * 7 + i * 13) % WORDS.length]).join(' ');
}

export interface MemoryCase {
  runs: number;
  sameTask: boolean;
  wallMs: number;
  recallP50Ms: number;
  recallP95Ms: number;
  recallMaxMs: number;
  /** Recalls not answered within RECALL_WAIT_MS: the Planner would have planned without lessons. */
  giveUps: number;
}

export interface MemoryBenchResult {
  part: 'memory';
  seededFailures: number;
  recallWaitMs: number;
  seedMs: number;
  cases: MemoryCase[];
  goal: Goal;
}

async function seed(memory: FailureMemory, failures: number): Promise<void> {
  for (let i = 0; i < failures; i++) {
    const id = `seed-${i}`;
    await memory.createTask({
      workflowId: id,
      task: `Implement ${words(12, i)} in module_${i}.py so that the tests pass`,
      language: 'python',
    });
    await memory.storeFailure({
      workflowId: id,
      iteration: 1,
      testOutput: `FAILED test_${i}.py::test_case - AssertionError ${words(40, i + 1)}\n`.repeat(4),
      rootCause: words(25, i + 2),
      fixHypothesis: words(20, i + 3),
      filesToChange: [`module_${i}.py`],
    });
  }
}

async function runCase(
  memory: FailureMemory,
  runs: number,
  sameTask: boolean,
  tag: string,
): Promise<MemoryCase> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: runs }, async (_, i) => {
      const id = `${tag}-${i}`;
      const task = sameTask
        ? 'Write add(a, b) in calc.py that returns the sum of two numbers'
        : `Write a ${words(10, i * 3 + runs)} function`;
      await memory.createTask({ workflowId: id, task, language: 'python' });
      const asked = performance.now();
      await memory.findSimilarFailures(task, { excludeWorkflowId: id, limit: 3 });
      latencies.push(performance.now() - asked);
      await memory.logIteration({ workflowId: id, iteration: 1, passRate: 0, passed: 0, failed: 1 });
      await memory.storeFailure({
        workflowId: id,
        iteration: 1,
        testOutput: 'FAILED test_calc.py::test_add - assert 3 == 4\n'.repeat(50),
        rootCause: words(20, i),
        fixHypothesis: words(10, i + 1),
        filesToChange: ['calc.py'],
      });
      await memory.updateTaskStatus(id, 'failed', 'benchmark');
    }),
  );
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    runs,
    sameTask,
    wallMs: Math.round(performance.now() - started),
    recallP50Ms: Math.round(median(sorted)),
    recallP95Ms: Math.round(percentile(sorted, 95)),
    recallMaxMs: Math.round(sorted[sorted.length - 1] ?? 0),
    giveUps: latencies.filter((ms) => ms > RECALL_WAIT_MS).length,
  };
}

export async function runMemoryBench(
  opts: { levels: number[]; seededFailures: number },
  progress: (m: string) => void,
): Promise<MemoryBenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-memory-bench-'));
  const memory = await openFailureMemory({ dataDir: dir });
  try {
    progress(`seeding ${opts.seededFailures} failures`);
    const seedStarted = performance.now();
    await seed(memory, opts.seededFailures);
    const seedMs = Math.round(performance.now() - seedStarted);
    const cases: MemoryCase[] = [];
    for (const runs of opts.levels) {
      for (const sameTask of [false, true]) {
        progress(`${runs} runs at once, ${sameTask ? 'one task' : 'distinct tasks'}`);
        cases.push(await runCase(memory, runs, sameTask, `bench-${runs}-${sameTask ? 'same' : 'own'}`));
      }
    }
    const atGoal = cases.find((c) => c.runs === GOAL_RUNS && !c.sameTask);
    return {
      part: 'memory',
      seededFailures: opts.seededFailures,
      recallWaitMs: RECALL_WAIT_MS,
      seedMs,
      cases,
      goal: goal(
        `lesson recalls given up at ${GOAL_RUNS} runs on distinct tasks`,
        atGoal?.giveUps ?? null,
        0,
      ),
    };
  } finally {
    await memory.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function memoryReport(r: MemoryBenchResult, io: BenchIO): void {
  io.out(
    `\n== Memory: embedded failure memory (${r.seededFailures} past failures), N runs at once; give-up = no lessons within ${r.recallWaitMs} ms ==`,
  );
  for (const line of formatTable(
    ['runs', 'tasks', 'wall ms', 'recall p50', 'p95', 'max', 'give-ups'],
    r.cases.map((c) => [
      c.runs,
      c.sameTask ? 'one' : 'distinct',
      c.wallMs,
      c.recallP50Ms,
      c.recallP95Ms,
      c.recallMaxMs,
      c.giveUps,
    ]),
  ))
    io.out(line);
  io.out(goalText(r.goal));
}
