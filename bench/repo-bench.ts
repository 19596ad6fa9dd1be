/**
 * What a `--repo` run costs before its agents start, on a generated, committed repository of
 * 20,000 files by default (a Python test suite among them), interleaved repetitions, medians:
 *
 * - Preparing: `resolveRepository` + `prepareRun` (what `aca run --repo` and the prepareRun
 *   activity do: check the repository, make the run's worktree and branch, decide the test
 *   command, and on a root worker lend the worktree to the run's sandbox user) against a bare
 *   `git worktree add -b`. Goal: at most 1.2x the bare worktree.
 * - Baseline: the baseline test run in that worktree (`runTestSuite` in bubblewrap with the
 *   decided command) against a bare `python3 -m pytest` there. Goal: at most 1.10x.
 *
 * Worktrees are removed after each repetition, untimed.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { prepareRun, type PreparedRun } from '../src/activities/repo-activities';
import { HostRuns, resolveRepository, removeRunWorktree } from '../src/repo';
import { checkSandboxAvailable, PYTHON, runTestSuite } from '../src/sandbox';
import { formatPairs, goal, goalText, median, round, type BenchIO, type Goal } from './bench-util';

const run = promisify(execFile);

export const REPO_PREPARE_GOAL = 1.2;
export const REPO_BASELINE_GOAL = 1.1;
const FILES_PER_FOLDER = 100;
/** Test files in the suite: one per 500 files of the repository, 1 to 40 (40 at 20,000). */
const MAX_TEST_FILES = 40;
export const TESTS_PER_FILE = 25;

export function testFileCount(files: number): number {
  return Math.min(MAX_TEST_FILES, Math.max(1, Math.floor(files / 500)));
}

/** The bare test command, run in the worktree. */
const BARE_PYTEST = [PYTHON, '-m', 'pytest', '-q', '-p', 'no:cacheprovider'];

export interface RepoBenchResult {
  part: 'repo';
  /** Tracked files in the generated repository, the test suite's included. */
  files: number;
  reps: number;
  /** The test command prepareRunRepository decided (its label). */
  testCommand: string;
  tests: number;
  prepare: {
    bareMedianMs: number;
    acaMedianMs: number;
    /** Of the aca side: resolveRepository alone. */
    resolveMedianMs: number;
    ratio: number;
    bareMs: number[];
    acaMs: number[];
    resolveMs: number[];
    goal: Goal;
  };
  baseline: {
    bareMedianMs: number;
    acaMedianMs: number;
    ratio: number;
    bareMs: number[];
    acaMs: number[];
    goal: Goal;
  };
}

/** Bare git as a person runs it: no global or system config, a fixed identity. */
const GIT_ENV: NodeJS.ProcessEnv = {
  PATH: '/usr/bin:/bin',
  HOME: os.homedir(),
  LC_ALL: 'C',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};

export const bareGit = (cwd: string, args: string[]) =>
  run('git', args, { cwd, env: GIT_ENV, maxBuffer: 64 * 1024 * 1024 });

/**
 * Runs `a` and `b` `reps` times each, alternating which goes first (ABBA), and returns each
 * side's milliseconds. `after` runs untimed after every measurement (cleanup).
 */
async function interleaved<T>(
  reps: number,
  a: (rep: number) => Promise<T>,
  b: (rep: number) => Promise<T>,
  after: (result: T) => Promise<void>,
  progress: (rep: number, aMs: number, bMs: number) => void,
): Promise<{ aMs: number[]; bMs: number[] }> {
  const aMs: number[] = [];
  const bMs: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const sides: Array<[(rep: number) => Promise<T>, number[]]> = [
      [a, aMs],
      [b, bMs],
    ];
    for (const [measure, into] of rep % 2 === 0 ? sides : sides.reverse()) {
      const started = performance.now();
      const result = await measure(rep);
      into.push(round(performance.now() - started));
      await after(result);
    }
    progress(rep, aMs[rep], bMs[rep]);
  }
  return { aMs, bMs };
}

function testFile(index: number): string {
  const lines = ['from calc import ops', ''];
  for (let t = 0; t < TESTS_PER_FILE; t++) {
    lines.push(
      `def test_case_${index}_${t}():`,
      `    assert ops.add(${index}, ${t}) == ${index + t}`,
      `    assert ops.scale([${t}, ${index}], 2) == [${2 * t}, ${2 * index}]`,
      '',
    );
  }
  return lines.join('\n');
}

/**
 * A committed repository of `files` tracked files: a package `calc` and `tests/` with
 * `testFiles` (default `testFileCount(files)`) x 25 trivial pytest tests, the rest Python
 * modules in folders of 100. `packed`: its objects in one pack, as a clone has them, made before
 * this returns (otherwise the commit's loose objects start an automatic gc in the background).
 */
export async function generateRepository(
  dir: string,
  files: number,
  testFiles = testFileCount(files),
  packed = false,
): Promise<number> {
  const write = (relative: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(dir, relative)), { recursive: true });
    fs.writeFileSync(path.join(dir, relative), text);
  };
  write('calc/__init__.py', '');
  write(
    'calc/ops.py',
    [
      'def add(a, b):',
      '    return a + b',
      '',
      'def scale(values, k):',
      '    return [v * k for v in values]',
      '',
    ].join('\n'),
  );
  // A package, so pytest puts the repository's top on sys.path and `import calc` works.
  write('tests/__init__.py', '');
  for (let i = 0; i < testFiles; i++) write(`tests/test_suite_${i}.py`, testFile(i));
  write('.gitignore', '__pycache__/\n');
  const filler = Math.max(0, files - (testFiles + 4));
  for (let i = 0; i < filler; i++) {
    const lines = [`"""Module ${i}."""`, ''];
    for (let f = 0; f < 6; f++)
      lines.push(`def function_${f}_${i}(value):`, `    return value * ${f} + ${i}`, '');
    write(path.join('src', `pkg${Math.floor(i / FILES_PER_FOLDER)}`, `module_${i}.py`), lines.join('\n'));
  }
  // Files written in the same second as the index are "racily clean" and would be re-read by
  // every status: a real checkout's index is newer than its files.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await bareGit(dir, ['init', '-q', '-b', 'main']);
  await bareGit(dir, ['add', '-A']);
  await bareGit(dir, [...(packed ? ['-c', 'gc.auto=0'] : []), 'commit', '-q', '-m', 'generated repository']);
  if (packed) await bareGit(dir, ['repack', '-a', '-d', '-q']);
  const tracked = await bareGit(dir, ['ls-files', '-z']);
  return tracked.stdout.split('\0').filter(Boolean).length;
}

/** pytest's "N passed" of its summary line; 0 when none passed. */
export function pytestPassed(output: string): number {
  const summary = output.trim().split('\n').at(-1) ?? '';
  const passed = /(\d+) passed/.exec(summary);
  return passed ? Number(passed[1]) : 0;
}

export async function runRepoBench(
  options: { files: number; reps: number },
  progress: (message: string) => void,
): Promise<RepoBenchResult> {
  const availability = checkSandboxAvailable('bwrap');
  if (!availability.ok) throw new Error(availability.message);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-repo-bench-'));
  // The sandbox user enters the worktrees below it.
  fs.chmodSync(root, 0o755);
  const repoDir = path.join(root, 'repo');
  const worktrees = path.join(root, 'worktrees');
  fs.mkdirSync(worktrees, { mode: 0o755 });
  try {
    progress(`generating and committing a repository of ${options.files} files`);
    fs.mkdirSync(repoDir);
    const files = await generateRepository(repoDir, options.files);
    const commonDir = path.join(repoDir, '.git');
    let serial = 0;

    interface Made {
      workTree: string;
      branch: string;
      prepared: PreparedRun | null;
    }
    const remove = async (made: Made): Promise<void> =>
      removeRunWorktree({ commonDir, workTree: made.workTree, branch: made.branch });
    const bareWorktree = async (): Promise<Made> => {
      const n = ++serial;
      const workTree = path.join(worktrees, `bare-${n}`);
      await bareGit(repoDir, ['worktree', 'add', '-q', '-b', `bare-${n}`, workTree, 'HEAD']);
      return { workTree, branch: `bare-${n}`, prepared: null };
    };
    const resolveMs: number[] = [];
    const acaWorktree = async (): Promise<Made> => {
      const n = ++serial;
      const started = performance.now();
      const resolved = await resolveRepository(repoDir, 'HEAD');
      resolveMs.push(round(performance.now() - started));
      const workflowId = `bench-${n}`;
      const workTree = path.join(worktrees, workflowId);
      const prepared = await prepareRun(
        {
          workflowId,
          workspace: workTree,
          language: 'python',
          repo: { path: resolved.topLevel, baseCommit: resolved.baseCommit },
          testCommand: null,
          setupCommand: null,
        },
        'bwrap',
        null,
        new HostRuns({
          store: null,
          home: root,
          workspacesRoot: worktrees,
          author: { name: 'aca bench', email: 'bench@aca.invalid' },
        }),
      );
      return { workTree, branch: prepared.place.branch, prepared };
    };

    progress('warm-up: one prepared run and one bare worktree (not measured)');
    await remove(await acaWorktree());
    await remove(await bareWorktree());
    resolveMs.length = 0;
    const prepare = await interleaved(options.reps, acaWorktree, bareWorktree, remove, (rep, aca, bare) =>
      progress(`prepare rep ${rep + 1}/${options.reps}: aca ${aca} ms, git worktree add ${bare} ms`),
    );

    const prepareResolveMs = resolveMs.slice();

    // The baseline: one prepared worktree, its tests run both ways.
    const made = await acaWorktree();
    const prepared = made.prepared!;
    const { command, dependencies } = prepared.testSetup;
    const expected = testFileCount(options.files) * TESTS_PER_FILE;
    const saw = (who: string, passed: number): void => {
      if (passed !== expected) throw new Error(`expected ${expected} passed tests, ${who} saw ${passed}`);
    };
    const bareSuite = async (): Promise<void> => {
      const { stdout } = await run(BARE_PYTEST[0], BARE_PYTEST.slice(1), {
        cwd: made.workTree,
        // aca's runner writes no __pycache__ either: both pay the same compile cost.
        env: { PATH: '/usr/bin:/bin', HOME: os.homedir(), PYTHONDONTWRITEBYTECODE: '1' },
        maxBuffer: 64 * 1024 * 1024,
      });
      saw('bare pytest', pytestPassed(stdout));
    };
    const acaSuite = async (): Promise<void> => {
      const report = await runTestSuite({
        workspace: made.workTree,
        language: 'python',
        mode: 'bwrap',
        command,
        dependencies,
      });
      if (report.outcome !== 'completed') {
        throw new Error(
          `the baseline run did not complete: ${report.outcome} ${report.message ?? ''}\n${report.output}`,
        );
      }
      saw('the baseline run', report.passed);
    };
    let baseline: { aMs: number[]; bMs: number[] };
    try {
      progress(`baseline with ${command.label}: warm-up, one run each (not measured)`);
      await bareSuite();
      await acaSuite();
      baseline = await interleaved(
        options.reps,
        acaSuite,
        bareSuite,
        async () => undefined,
        (rep, aca, bare) =>
          progress(`baseline rep ${rep + 1}/${options.reps}: aca ${aca} ms, bare pytest ${bare} ms`),
      );
    } finally {
      await remove(made);
    }

    const side = (aMs: number[], bMs: number[]) => {
      const acaMedianMs = round(median(aMs));
      const bareMedianMs = round(median(bMs));
      return {
        bareMedianMs,
        acaMedianMs,
        ratio: round(acaMedianMs / bareMedianMs, 3),
        bareMs: bMs,
        acaMs: aMs,
      };
    };
    const prep = side(prepare.aMs, prepare.bMs);
    const base = side(baseline.aMs, baseline.bMs);
    return {
      part: 'repo',
      files,
      reps: options.reps,
      testCommand: command.label,
      tests: expected,
      prepare: {
        ...prep,
        resolveMedianMs: round(median(prepareResolveMs)),
        resolveMs: prepareResolveMs,
        goal: goal(`preparing a run / git worktree add on ${files} files`, prep.ratio, REPO_PREPARE_GOAL),
      },
      baseline: {
        ...base,
        goal: goal(
          `baseline run in bubblewrap / bare pytest, ${expected} tests`,
          base.ratio,
          REPO_BASELINE_GOAL,
        ),
      },
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function repoReport(r: RepoBenchResult, io: BenchIO): void {
  io.out(
    `\n== Repo: preparing a --repo run and its baseline on a generated repository of ${r.files} files, ${r.reps} runs each ==`,
  );
  for (const line of formatPairs([
    ['git worktree add median', `${r.prepare.bareMedianMs} ms`],
    [
      'preparing a run median',
      `${r.prepare.acaMedianMs} ms (resolveRepository ${r.prepare.resolveMedianMs} ms)`,
    ],
    ['prepare ratio', r.prepare.ratio],
    ['prepare result', goalText(r.prepare.goal)],
    ['test command', `${r.testCommand}, ${r.tests} tests`],
    ['bare pytest median', `${r.baseline.bareMedianMs} ms`],
    ['baseline run median', `${r.baseline.acaMedianMs} ms`],
    ['baseline ratio', r.baseline.ratio],
    ['baseline result', goalText(r.baseline.goal)],
  ]))
    io.out(line);
}
