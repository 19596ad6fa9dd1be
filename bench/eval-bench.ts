/**
 * `aca bench eval`: a batch of generated SWE-bench-format instances (one repository, one
 * off-by-one bug a module, each fixed by the scripted agent writing its gold patch) run at several
 * concurrencies: wall time, instances per minute, the time per instance above one plain `aca run`
 * of an instance, and the batch history's size (all its executions, continue-as-new included).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Scenario } from '../src/llm/scenario';
import { evalDatabase } from '../src/eval/batch-repository';
import type { StoredInstance } from '../src/eval/batch-store';
import { openBatchStore } from '../src/eval/open-batch-store';
import { prepareEvalBatch } from '../src/eval/prepare-batch';
import type { EvalBatchInput, EvalReport } from '../src/shared/eval-types';
import { evalBatchWorkflow } from '../src/workflows/eval-batch';
import type { BenchStack } from './bench-stack';
import { runResult, uniqueSuffix } from './bench-stack';
import { formatTable, round, type BenchIO } from './bench-util';

export const DEFAULT_EVAL_LEVELS = [1, 8, 32];
export const DEFAULT_EVAL_INSTANCES = 200;

export interface EvalBenchOptions {
  instances: number;
  levels: number[];
}

export interface EvalBenchLevel {
  concurrency: number;
  wallMs: number;
  instancesPerMinute: number;
  /** Wall time per instance at this concurrency. */
  perInstanceMs: number;
  /** At concurrency 1: per instance minus one plain run of an instance (the batch's own cost, evaluation included). */
  overheadPerInstanceMs: number | null;
  resolved: number;
  executions: number;
  historyEvents: number;
  historyBytes: number;
  /** The largest single execution's history. */
  maxExecutionEvents: number;
}

export interface EvalBenchResult {
  part: 'eval';
  instances: number;
  /** One instance as a plain `aca run` on the same repository (the median of three). */
  singleRunMs: number;
  levels: EvalBenchLevel[];
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@b',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@b',
      GIT_CONFIG_GLOBAL: '/dev/null',
    },
  });

interface Generated {
  instancesFile: string;
  reposDir: string;
  scenarios: Scenario[];
  problems: string[];
}

/** One repository with `count` modules, each off by one; an instance per module. */
function generate(root: string, count: number): Generated {
  const reposDir = path.join(root, 'repos');
  const repo = path.join(reposDir, 'bench__gen');
  fs.mkdirSync(path.join(repo, 'pkg'), { recursive: true });
  fs.mkdirSync(path.join(repo, 'tests'), { recursive: true });
  git(repo, 'init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(path.join(repo, 'pkg', '__init__.py'), '');
  for (let i = 0; i < count; i++)
    fs.writeFileSync(path.join(repo, 'pkg', `m${i}.py`), `def value():\n    return ${i} - 1\n`);
  fs.writeFileSync(path.join(repo, 'tests', 'test_base.py'), 'def test_base():\n    assert True\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '--quiet', '-m', 'base');
  const base = git(repo, 'rev-parse', 'HEAD').trim();
  const lines: string[] = [];
  const scenarios: Scenario[] = [];
  const problems: string[] = [];
  for (let i = 0; i < count; i++) {
    const fixed = `def value():\n    return ${i}\n`;
    const test = `from pkg.m${i} import value\n\n\ndef test_value_${i}():\n    assert value() == ${i}\n`;
    fs.writeFileSync(path.join(repo, 'pkg', `m${i}.py`), fixed);
    fs.writeFileSync(path.join(repo, 'tests', `test_fix_${i}.py`), test);
    git(repo, 'add', '-A');
    const patch = git(repo, 'diff', '--cached', base, '--', `pkg/m${i}.py`);
    const testPatch = git(repo, 'diff', '--cached', base, '--', `tests/test_fix_${i}.py`);
    git(repo, 'reset', '--quiet', '--hard', base);
    const problem = `Marker bench-${i}-task: pkg.m${i}.value() is off by one.`;
    problems.push(problem);
    lines.push(
      JSON.stringify({
        instance_id: `bench__gen-${i}`,
        repo: 'bench/gen',
        base_commit: base,
        problem_statement: problem,
        patch,
        test_patch: testPatch,
        FAIL_TO_PASS: [`tests/test_fix_${i}.py::test_value_${i}`],
        PASS_TO_PASS: ['tests/test_base.py::test_base'],
        test_cmd: `/usr/bin/python3 -m pytest -p no:cacheprovider tests/test_fix_${i}.py tests/test_base.py`,
      }),
    );
    scenarios.push(goldScenario(`eval-bench-${i}`, `Marker bench-${i}-task:`, { [`pkg/m${i}.py`]: fixed }));
  }
  const instancesFile = path.join(root, 'instances.jsonl');
  fs.writeFileSync(instancesFile, lines.map((l) => `${l}\n`).join(''));
  return { instancesFile, reposDir, scenarios, problems };
}

function goldScenario(name: string, match: string, files: Record<string, string>): Scenario {
  const call = (tool: string, args: Record<string, unknown>) => ({
    tool_calls: [{ name: tool, arguments: args }],
  });
  return {
    name,
    match,
    agents: {
      planner: [[call('submit_plan', { summary: 'Fix it.', steps: ['fix'], files: Object.keys(files) })]],
      coder: [
        [
          ...Object.entries(files).map(([file, content]) => call('create_file', { path: file, content })),
          call('finish', { summary: 'Fixed.' }),
        ],
      ],
      tester: [[call('finish', { summary: 'Covered.' })]],
      reflector: [
        [
          call('submit_analysis', {
            rootCause: '-',
            fixHypothesis: '-',
            filesToChange: [],
            testsWrong: false,
          }),
        ],
      ],
    },
  };
}

export async function runEvalBench(
  stack: BenchStack,
  opts: EvalBenchOptions,
  progress: (m: string) => void,
): Promise<EvalBenchResult> {
  const root = path.join(stack.home, `eval-bench-${uniqueSuffix()}`);
  fs.mkdirSync(root, { recursive: true });
  progress(`generating ${opts.instances} instances`);
  const generated = generate(root, opts.instances);
  for (const scenario of generated.scenarios) stack.llm.addScenario(scenario);

  // One instance as a plain run, prepared as the batch prepares it (aca's copy of the repository).
  const single = await prepareEvalBatch(
    {
      instancesFile: generated.instancesFile,
      reposDir: generated.reposDir,
      limit: 1,
      id: `eval-bench-prep-${uniqueSuffix()}`,
      predictions: 'empty',
    },
    stack.config,
  );
  const stored = await storedInstance(stack, single.input, 'bench__gen-0');
  const singles: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = await stack.start({
      workflowId: `eval-bench-single-${uniqueSuffix()}`,
      task: generated.problems[0]!,
      model: 'scripted',
      options: { maxIterations: 1 },
      repo: { path: stored.repoPath, baseCommit: stored.baseCommit },
    });
    await runResult(started);
    singles.push(performance.now() - started.startedAt);
  }
  const singleRunMs = [...singles].sort((a, b) => a - b)[1]!;
  progress(`one plain run: ${round(singleRunMs)} ms`);

  const levels: EvalBenchLevel[] = [];
  for (const concurrency of opts.levels) {
    const batchId = `eval-bench-c${concurrency}-${uniqueSuffix()}`;
    const prepared = await prepareEvalBatch(
      {
        instancesFile: generated.instancesFile,
        reposDir: generated.reposDir,
        model: 'scripted',
        maxIterations: 1,
        concurrency,
        id: batchId,
      },
      stack.config,
    );
    progress(`batch of ${opts.instances} at concurrency ${concurrency}`);
    const started = performance.now();
    const handle = await stack.client.workflow.start(evalBatchWorkflow, {
      workflowId: batchId,
      taskQueue: stack.taskQueue,
      args: [prepared.input],
    });
    const report = (await handle.result()) as EvalReport;
    const wallMs = performance.now() - started;
    const listed = await closedExecutions(stack, batchId);
    const executions = listed.length;
    const historyEvents = listed.reduce((sum, e) => sum + e.historyLength, 0);
    const historyBytes = listed.reduce((sum, e) => sum + (e.historySize ?? 0), 0);
    const maxExecutionEvents = Math.max(0, ...listed.map((e) => e.historyLength));
    const perInstanceMs = wallMs / opts.instances;
    levels.push({
      concurrency,
      wallMs: round(wallMs),
      instancesPerMinute: round((opts.instances * 60_000) / wallMs, 2),
      perInstanceMs: round(perInstanceMs),
      overheadPerInstanceMs: concurrency === 1 ? round(perInstanceMs - singleRunMs) : null,
      resolved: report.resolved_instances,
      executions,
      historyEvents,
      historyBytes,
      maxExecutionEvents,
    });
    progress(`concurrency ${concurrency}: ${round(wallMs / 1000)} s, ${report.resolved_instances} resolved`);
  }
  return { part: 'eval', instances: opts.instances, singleRunMs: round(singleRunMs), levels };
}

export function evalBenchReport(r: EvalBenchResult, io: BenchIO): void {
  io.out(
    `\n== eval: ${r.instances} generated instances, scripted agent; one plain run ${r.singleRunMs} ms ==`,
  );
  for (const line of formatTable(
    [
      'concurrency',
      'wall s',
      'inst/min',
      'ms/inst',
      'overhead ms/inst',
      'resolved',
      'executions',
      'events',
      'bytes',
      'max events',
    ],
    r.levels.map((l) => [
      l.concurrency,
      round(l.wallMs / 1000, 1),
      l.instancesPerMinute,
      l.perInstanceMs,
      l.overheadPerInstanceMs === null ? '-' : l.overheadPerInstanceMs,
      l.resolved,
      l.executions,
      l.historyEvents,
      l.historyBytes,
      l.maxExecutionEvents,
    ]),
  ))
    io.out(line);
}

/**
 * The batch's executions as visibility lists them once every one is closed: visibility is updated
 * after the result is delivered, and a record read before that still has the history length of
 * the execution's start.
 */
async function closedExecutions(
  stack: BenchStack,
  batchId: string,
): Promise<Array<{ historyLength: number; historySize?: number }>> {
  for (let tries = 0; ; tries++) {
    const listed: Array<{ historyLength: number; historySize?: number; closed: boolean }> = [];
    for await (const execution of stack.client.workflow.list({ query: `WorkflowId = '${batchId}'` })) {
      listed.push({
        historyLength: execution.historyLength,
        historySize: execution.historySize ?? 0,
        closed: execution.closeTime !== undefined,
      });
    }
    if ((listed.length > 0 && listed.every((e) => e.closed)) || tries >= 100) return listed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One instance as the batch stored it: in its folder, or in the database with DATABASE_URL. */
async function storedInstance(stack: BenchStack, batch: EvalBatchInput, id: string): Promise<StoredInstance> {
  const { databaseUrl } = stack.config;
  const database = batch.store === 'database' && databaseUrl ? evalDatabase(databaseUrl) : undefined;
  try {
    return await openBatchStore(batch, database).instance(id);
  } finally {
    await database?.close();
  }
}
