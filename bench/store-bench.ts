/**
 * What the git store (ACA_GIT_STORE, for workers on many hosts) costs a run, against the same
 * run on one host (the default store: nothing pushed), for two cases: the demo run, and the demo
 * scenario as a `--repo` run on a generated, committed repository of 20,000 files (repo-bench's
 * generator, with a test suite of one file of 25 tests, so that test time does not drown the
 * store's). Interleaved repetitions, medians:
 *
 * - (a) the run's wall time on one worker with the default store;
 * - (b) the same run on a second worker (same Temporal server, same process) whose ACA_GIT_STORE
 *   is a bare repository the bench made: every step that changes files commits and pushes;
 * - (c) a cold worker: after each store run, on a fresh empty ACA_HOME, the time
 *   `HostRuns.adopt` takes to bring the run's last commit from the store (fetch + checkout).
 *
 * For the repo case (its objects packed, as a clone has them) the store already holds the
 * repository's history (pushed once, before the repetitions), as it does for every run after a
 * repository's first; that first push, which prepareRun makes when the store lacks the history,
 * is timed on its own into fresh stores. After each run (untimed) its worktree is removed (repo
 * case) and the page cache written out (`sync`), so no run pays for the one before. Where the difference went is read from the runs'
 * histories, and a trivial git call is timed from this process and from a fresh one (a step's
 * commit and push are six git calls, each through the spawn helper). Goal, reported: the demo run with the store at most
 * 1.10x the run on one host.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  git,
  parseGitStoreLocation,
  pushRunCommit,
  HostRuns,
  resolveRepository,
  removeRunWorktree,
  type GitStoreLocation,
} from '../src/repo';
import type { RepoInput, RunPlace } from '../src/shared/run-types';
import { openBenchStack, type BenchStack } from './bench-stack';
import {
  formatPairs,
  formatTable,
  goal,
  goalText,
  median,
  round,
  type BenchIO,
  type Goal,
} from './bench-util';
import { fetchExecutions, timeBreakdown } from './history-analysis';
import { DEMO_SCENARIO, measureDemoRun, warmUp, type MeasuredRun } from './demo-runs';
import { bareGit, generateRepository, TESTS_PER_FILE } from './repo-bench';

const run = promisify(execFile);

export const STORE_DEMO_GOAL = 1.1;
/** Test files in the repo case's suite (25 tests each): the store's cost, not pytest's, is measured. */
const REPO_TEST_FILES = 1;

export interface StoreBenchOptions {
  delayMs: number;
  reps: number;
  /** Tracked files in the repo case's generated repository. */
  files: number;
  keep: boolean;
}

export interface StoreRep {
  oneHostMs: number;
  storeMs: number;
  /** HostRuns.adopt on a fresh ACA_HOME, bringing the store run's last commit. */
  coldOpenMs: number;
  /** Commits on the store run's branch after its base, plus prepareRun's push of the base. */
  pushes: number;
  /** Files the cold worker checked out. */
  coldFiles: number;
  /** What the cold worker's repository holds after the fetch (git count-objects: loose + packs). */
  coldFetchedKiB: number;
  /** Where each run's time went, from its history (ms; see `whereOf`). */
  oneHostWhere: Record<string, number>;
  storeWhere: Record<string, number>;
}

export interface StoreCase {
  name: 'demo' | 'repo';
  description: string;
  reps: StoreRep[];
  /** (a) */
  oneHostMedianMs: number;
  /** (b) */
  storeMedianMs: number;
  /** (b) / (a) */
  storeRatio: number;
  /** (b) - (a): what the run paid for its pushes. */
  storeExtraMs: number;
  pushesMedian: number;
  /** storeExtraMs / pushesMedian. */
  perPushMs: number;
  /** (c) */
  coldOpenMedianMs: number;
  /** (c) / (a) */
  coldRatio: number;
  coldFiles: number;
  coldFetchedKiB: number;
  /** Median ms of each part of a run's time on one host, with the store, and the difference. */
  where: Array<{ part: string; oneHostMs: number; storeMs: number; extraMs: number }>;
  /** The repo case: pushing the repository's base history into an empty store, as a first run does. */
  firstPush: { ms: number[]; medianMs: number; ratio: number } | null;
}

export interface StoreBenchResult {
  part: 'store';
  scenario: string;
  delayMs: number;
  reps: number;
  /** Tracked files of the repo case's repository, and the tests its test command runs. */
  repoFiles: number;
  repoTests: number;
  /** The repo case's test command, as the run decided it (its label). */
  repoTestCommand: string | null;
  cases: StoreCase[];
  /**
   * A trivial git call (`rev-parse`) from this process, where both workers run, median of 15:
   * a step's commit and push are six git calls (through the spawn helper, so the process size matters little).
   */
  gitCallMs: number;
  /** The same calls from a fresh Node process. */
  gitCallFreshMs: number;
  /** This process's resident memory when gitCallMs was measured (MB). */
  processRssMb: number;
  goal: Goal;
}

/**
 * Where a run's time went, from the server's event times: each activity type's execution (the
 * steps that push: prepareRun, and agentStep and the commit step when they commit), workflow
 * tasks (with the local activities in them: file tools, which commit and push per write), and
 * the rest.
 */
async function whereOf(stack: BenchStack, m: MeasuredRun): Promise<Record<string, number>> {
  const t = timeBreakdown(await fetchExecutions(stack.client, m.workflowId, m.run.firstExecutionRunId));
  return {
    ...Object.fromEntries(
      Object.entries(t.activityExecMs).map(([type, ms]) => [`activity ${type}`, round(ms)]),
    ),
    'workflow tasks (incl. local activities: file tools)': round(t.workflowTaskMs),
    'activity tasks waiting for the worker': round(t.activityQueueMs),
    'parallel work counted twice above': round(-t.overlapMs),
    'covered by no activity or workflow task': round(t.uncoveredMs),
    'client: start request and result delivery': round(m.wallMs - t.serverWallMs),
  };
}

/** Median ms of 15 `git rev-parse` calls, made as aca makes them (git.ts, through the spawn helper). */
async function gitCallMedian(gitDir: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const started = performance.now();
    await git({ gitDir }, ['rev-parse', '--git-dir']);
    times.push(performance.now() - started);
  }
  return median(times);
}

/** gitCallMedian in a fresh Node process (`node -e`, the git directory as its argument). */
const FRESH_GIT_CALLS = `
const run = require('node:util').promisify(require('node:child_process').execFile);
(async () => {
  const times = [];
  for (let i = 0; i < 15; i++) {
    const started = performance.now();
    await run('git', ['--git-dir', process.argv[1], 'rev-parse', '--git-dir']);
    times.push(performance.now() - started);
  }
  console.log(times.sort((a, b) => a - b)[7]);
})();`;

/**
 * Writes out what the last run and its cleanup left in the page cache (tens of thousands of
 * files in the repo case), so that the next run does not pay for it.
 */
async function settle(): Promise<void> {
  await run('sync', []);
}

/** Runs `a` then `b` on even repetitions, `b` then `a` on odd ones. */
async function alternate(rep: number, a: () => Promise<void>, b: () => Promise<void>): Promise<void> {
  for (const side of rep % 2 === 0 ? [a, b] : [b, a]) await side();
}

async function countObjectsKiB(gitDir: string): Promise<number> {
  const counted = await git({ gitDir }, ['count-objects', '-v']);
  const field = (name: string): number =>
    Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(counted)?.[1] ?? 0);
  return field('size') + field('size-pack');
}

/** The cold worker: a fresh ACA_HOME that has never seen the run brings its last commit from the store. */
async function coldOpen(
  store: GitStoreLocation,
  author: { name: string; email: string },
  root: string,
  { place, headCommit }: { place: RunPlace; headCommit: string },
): Promise<{ ms: number; files: number; fetchedKiB: number }> {
  const home = fs.mkdtempSync(path.join(root, 'cold-home-'));
  try {
    const host = new HostRuns({ store, home, workspacesRoot: path.join(home, 'workspaces'), author });
    const started = performance.now();
    const adopted = await host.adopt(place, headCommit);
    const ms = round(performance.now() - started);
    if (adopted.workTree === place.workTree) {
      throw new Error(`the cold worker did not adopt ${place.workflowId} in a work tree of its own`);
    }
    const target = { gitDir: adopted.gitDir, workTree: adopted.workTree };
    const head = (await git(target, ['rev-parse', 'HEAD'])).trim();
    if (head !== headCommit) throw new Error(`the cold copy is at ${head}, not ${headCommit}`);
    const status = await git(target, ['status', '--porcelain']);
    if (status.trim()) throw new Error(`the cold copy differs from ${headCommit}:\n${status}`);
    const files = (await git(target, ['ls-files', '-z'])).split('\0').filter(Boolean).length;
    return { ms, files, fetchedKiB: await countObjectsKiB(adopted.commonDir) };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

export async function runStoreBench(
  stack: BenchStack,
  options: StoreBenchOptions,
  progress: (message: string) => void,
): Promise<StoreBenchResult> {
  if (!stack.config.gitStore.isDefault) throw new Error('the one-host stack must use the default store');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-store-bench-'));
  // The sandbox user enters the repo case's worktrees, whose git directories are below it.
  fs.chmodSync(root, 0o755);
  let storeStack: BenchStack | null = null;
  try {
    const storePath = path.join(root, 'store.git');
    await bareGit(root, ['init', '--bare', '-q', storePath]);
    storeStack = await openBenchStack({
      progress: (m) => progress(`store worker: ${m}`),
      temporalAddress: stack.temporalAddress,
      gitStore: storePath,
      keepHome: options.keep,
      modelOptions: stack.config.modelOptions,
    });
    const withStore: BenchStack = storeStack;
    const store = withStore.config.gitStore;
    if (store.isDefault || store.url !== storePath)
      throw new Error(`the store worker's store is ${store.url}`);
    const author = withStore.config.gitAuthor;
    for (const s of [stack, withStore]) s.llm.setDelay(options.delayMs);
    await warmUp(stack, progress);
    await warmUp(withStore, (m) => progress(`store worker: ${m}`));
    const gitCallMs = round(await gitCallMedian(storePath));
    const processRssMb = Math.round(process.memoryUsage().rss / 1024 ** 2);
    const fresh = await run(process.execPath, ['-e', FRESH_GIT_CALLS, storePath]);
    const gitCallFreshMs = round(Number(fresh.stdout.trim()));
    progress(
      `a git call: ${gitCallMs} ms from this process (${processRssMb} MB resident), ${gitCallFreshMs} ms from a fresh one (medians of 15)`,
    );

    const pushesOf = async (m: MeasuredRun): Promise<number> => {
      const { baseCommit, headCommit } = m.result;
      if (!baseCommit || !headCommit) throw new Error(`${m.workflowId} recorded no base or head commit`);
      const tip = (await git({ gitDir: storePath }, ['rev-parse', `refs/heads/${m.result.branch}`])).trim();
      if (tip !== headCommit)
        throw new Error(`the store has ${m.result.branch} at ${tip}, the run ended at ${headCommit}`);
      return (
        Number(
          (await git({ gitDir: storePath }, ['rev-list', '--count', `${baseCommit}..${headCommit}`])).trim(),
        ) + 1
      );
    };
    const placeOf = (m: MeasuredRun): { place: RunPlace; headCommit: string } => {
      const { headCommit, place } = m.result;
      if (!headCommit || !place) throw new Error(`${m.workflowId} recorded no place or commit`);
      return { place, headCommit };
    };

    const measureCase = async (
      name: StoreCase['name'],
      extra: { repo?: RepoInput },
      after: (m: MeasuredRun) => Promise<void>,
    ): Promise<StoreRep[]> => {
      const reps: StoreRep[] = [];
      for (let rep = 0; rep < options.reps; rep++) {
        const row: Partial<StoreRep> = {};
        await alternate(
          rep,
          async () => {
            const m = await measureDemoRun(stack, `store-${name}-onehost`, extra);
            row.oneHostMs = round(m.wallMs);
            row.oneHostWhere = await whereOf(stack, m);
            await after(m);
            await settle();
          },
          async () => {
            const m = await measureDemoRun(withStore, `store-${name}-store`, extra);
            row.storeMs = round(m.wallMs);
            row.storeWhere = await whereOf(withStore, m);
            row.pushes = await pushesOf(m);
            const cold = await coldOpen(store, author, root, placeOf(m));
            row.coldOpenMs = cold.ms;
            row.coldFiles = cold.files;
            row.coldFetchedKiB = cold.fetchedKiB;
            await after(m);
            await settle();
          },
        );
        const done = row as StoreRep;
        reps.push(done);
        progress(
          `${name} rep ${rep + 1}/${options.reps}: one host ${done.oneHostMs} ms, store ${done.storeMs} ms (${done.pushes} pushes), cold open ${done.coldOpenMs} ms (${done.coldFiles} files)`,
        );
      }
      return reps;
    };

    const summarize = (
      name: StoreCase['name'],
      description: string,
      reps: StoreRep[],
      firstPushMs: number[] | null,
    ): StoreCase => {
      const oneHostMedianMs = round(median(reps.map((r) => r.oneHostMs)));
      const storeMedianMs = round(median(reps.map((r) => r.storeMs)));
      const coldOpenMedianMs = round(median(reps.map((r) => r.coldOpenMs)));
      const pushesMedian = median(reps.map((r) => r.pushes));
      const storeExtraMs = round(storeMedianMs - oneHostMedianMs);
      const parts = [
        ...new Set(reps.flatMap((r) => [...Object.keys(r.oneHostWhere), ...Object.keys(r.storeWhere)])),
      ];
      const where = parts.map((part) => {
        const oneHostMs = round(median(reps.map((r) => r.oneHostWhere[part] ?? 0)));
        const storeMs = round(median(reps.map((r) => r.storeWhere[part] ?? 0)));
        return { part, oneHostMs, storeMs, extraMs: round(storeMs - oneHostMs) };
      });
      return {
        name,
        description,
        reps,
        oneHostMedianMs,
        storeMedianMs,
        storeRatio: round(storeMedianMs / oneHostMedianMs, 3),
        storeExtraMs,
        pushesMedian,
        perPushMs: round(storeExtraMs / pushesMedian),
        coldOpenMedianMs,
        coldRatio: round(coldOpenMedianMs / oneHostMedianMs, 3),
        coldFiles: median(reps.map((r) => r.coldFiles)),
        coldFetchedKiB: median(reps.map((r) => r.coldFetchedKiB)),
        where,
        firstPush: firstPushMs && {
          ms: firstPushMs,
          medianMs: round(median(firstPushMs)),
          ratio: round(median(firstPushMs) / oneHostMedianMs, 3),
        },
      };
    };

    // 1. The demo run.
    const demoDescription = `${DEMO_SCENARIO}, a repository of its own`;
    progress(`demo: ${options.reps} runs each on one host and with the store, interleaved`);
    const demoReps = await measureCase('demo', {}, async () => undefined);
    const demo = summarize('demo', demoDescription, demoReps, null);

    // 2. The demo scenario as a --repo run on a generated repository.
    progress(`generating and committing a repository of ${options.files} files`);
    const repoDir = path.join(root, 'repo');
    fs.mkdirSync(repoDir);
    const repoFiles = await generateRepository(repoDir, options.files, REPO_TEST_FILES, true);
    const resolved = await resolveRepository(repoDir, 'HEAD');
    const userRepository = { commonDir: path.join(repoDir, '.git') };

    // The first push of the repository's history, into empty stores; the last fills the real store.
    const firstPushMs: number[] = [];
    for (let i = 0; i <= options.reps; i++) {
      const seed = i === options.reps;
      const target = seed ? storePath : path.join(root, `first-push-${i}.git`);
      if (!seed) await bareGit(root, ['init', '--bare', '-q', target]);
      const started = performance.now();
      await pushRunCommit(
        parseGitStoreLocation(target, root),
        userRepository,
        `aca/bench-first-push-${i}`,
        resolved.baseCommit,
        null,
      );
      const ms = round(performance.now() - started);
      if (seed) {
        progress(`the store now holds the repository's history (${ms} ms, not counted)`);
      } else {
        firstPushMs.push(ms);
        progress(`first push ${i + 1}/${options.reps} of ${repoFiles} files into an empty store: ${ms} ms`);
        fs.rmSync(target, { recursive: true, force: true });
      }
    }

    let repoTestCommand: string | null = null;
    const removeWorktree = async (m: MeasuredRun): Promise<void> => {
      repoTestCommand ??= m.result.testCommand;
      const { place } = m.result;
      if (!place) return;
      await removeRunWorktree(place);
    };
    const repoDescription = `${DEMO_SCENARIO} as a --repo run on ${repoFiles} files, ${REPO_TEST_FILES * TESTS_PER_FILE} tests of the repository`;
    progress(`repo: ${options.reps} runs each on one host and with the store, interleaved`);
    const repoReps = await measureCase(
      'repo',
      { repo: { path: resolved.topLevel, baseCommit: resolved.baseCommit } },
      removeWorktree,
    );
    const repo = summarize('repo', repoDescription, repoReps, firstPushMs);

    return {
      part: 'store',
      scenario: DEMO_SCENARIO,
      delayMs: options.delayMs,
      reps: options.reps,
      repoFiles,
      repoTests: REPO_TEST_FILES * TESTS_PER_FILE,
      repoTestCommand,
      cases: [demo, repo],
      gitCallMs,
      gitCallFreshMs,
      processRssMb,
      goal: goal('demo run with the git store / on one host', demo.storeRatio, STORE_DEMO_GOAL),
    };
  } finally {
    if (storeStack) await storeStack.close();
    if (options.keep) progress(`kept the store, the repository and its worktrees in ${root}`);
    else fs.rmSync(root, { recursive: true, force: true });
  }
}

export function storeReport(r: StoreBenchResult, io: BenchIO): void {
  io.out(
    `\n== Store: a run with ACA_GIT_STORE against one host (default store), scripted model delay d = ${r.delayMs} ms, ${r.reps} runs each ==`,
  );
  for (const c of r.cases) {
    io.out(`\n${c.name}: ${c.description}`);
    for (const line of formatTable(
      ['rep', 'one host ms', 'store ms', 'b/a', 'pushes', 'cold open ms', 'cold files'],
      c.reps.map((rep, i) => [
        i + 1,
        rep.oneHostMs,
        rep.storeMs,
        round(rep.storeMs / rep.oneHostMs, 3),
        rep.pushes,
        rep.coldOpenMs,
        rep.coldFiles,
      ]),
    ))
      io.out(`  ${line}`);
    io.out(`  Where the time went, median ms per run:`);
    for (const line of formatTable(
      ['part', 'one host', 'store', 'store - one host'],
      c.where.map((w) => [w.part, w.oneHostMs, w.storeMs, w.extraMs]),
    ))
      io.out(`    ${line}`);
  }
  io.out('');
  for (const line of formatTable(
    [
      'case',
      '(a) one host ms',
      '(b) store ms',
      'b/a',
      'b-a ms',
      'pushes',
      'ms/push',
      '(c) cold open ms',
      'c/a',
      'fetched KiB',
    ],
    r.cases.map((c) => [
      c.name,
      c.oneHostMedianMs,
      c.storeMedianMs,
      c.storeRatio,
      c.storeExtraMs,
      c.pushesMedian,
      c.perPushMs,
      c.coldOpenMedianMs,
      c.coldRatio,
      c.coldFetchedKiB,
    ]),
  ))
    io.out(line);
  io.out('');
  const pairs: Array<[string, string | number]> = [];
  const repo = r.cases.find((c) => c.name === 'repo');
  if (repo?.firstPush) {
    pairs.push([
      'first push (repo)',
      `${repo.firstPush.medianMs} ms median (${repo.firstPush.ms.join(', ')}), ${repo.firstPush.ratio} x (a): the base history of ${r.repoFiles} files into an empty store, once per repository`,
    ]);
  }
  pairs.push(
    [
      'git call',
      `${r.gitCallMs} ms from the workers' process (${r.processRssMb} MB resident), ${r.gitCallFreshMs} ms from a fresh Node process (medians of 15)`,
    ],
    [
      'repo test command',
      `${r.repoTestCommand ?? '-'}, ${r.repoTests} tests of the repository (+ the run's own)`,
    ],
    ['result', goalText(r.goal)],
  );
  for (const line of formatPairs(pairs)) io.out(line);
}
