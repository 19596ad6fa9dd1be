/**
 * What a git call costs the worker: `git rev-parse HEAD` and `git status` in a small repository,
 * run from this process grown to a worker's size (resident memory the embedded database and 50
 * runs give a worker), each way interleaved, medians:
 *
 * - direct: the git process started by this process itself (a fork of the whole process);
 * - helper: the same process started by the worker's small spawn helper (src/process/spawn-helper.ts);
 * - git(): the call as aca makes it (src/repo/git/git.ts: pinned config, driver pins, the helper).
 *
 * Goal: git() at most 5 ms (median).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { git } from '../src/repo';
import { runDirect, runViaHelper, startSpawnHelper, type RunRequest } from '../src/process';
import { formatTable, goal, goalText, median, round, type BenchIO, type Goal } from './bench-util';

export const GIT_CALL_GOAL_MS = 5;
/** Resident memory this process is grown to before measuring: a busy worker's. */
const WORKER_RSS_MB = 600;

export interface GitBenchRow {
  command: string;
  directMs: number;
  helperMs: number;
  gitCallMs: number;
  /** directMs / helperMs */
  ratio: number;
}

export interface GitBenchResult {
  part: 'git';
  calls: number;
  processRssMb: number;
  rows: GitBenchRow[];
  goal: Goal;
}

function smallRepository(root: string): string {
  const repo = path.join(root, 'repo');
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
  execFileSync('git', ['init', '-q', repo], { env });
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(repo, `file-${i}.txt`), `line ${i}\n`);
  const id = ['-c', 'user.name=b', '-c', 'user.email=b@b'];
  execFileSync('git', ['-C', repo, 'add', '-A'], { env });
  execFileSync('git', ['-C', repo, ...id, 'commit', '-q', '-m', 'base'], { env });
  fs.writeFileSync(path.join(repo, 'file-0.txt'), 'changed\n');
  return repo;
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

export async function runGitBench(
  opts: { calls: number },
  progress: (message: string) => void = () => undefined,
): Promise<GitBenchResult> {
  const calls = Math.max(5, Math.floor(opts.calls));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-git-bench-'));
  const ballast: Buffer[] = [];
  try {
    startSpawnHelper();
    const repo = smallRepository(root);
    const target = { gitDir: path.join(repo, '.git'), workTree: repo };
    // Pages touched, not only reserved: a fork copies the page tables of what is resident.
    while (process.memoryUsage.rss() < WORKER_RSS_MB * 1024 * 1024) ballast.push(Buffer.alloc(16 << 20, 1));
    const processRssMb = Math.round(process.memoryUsage.rss() / 1024 ** 2);
    progress(`this process: ${processRssMb} MB resident`);
    const gitPath = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const rows: GitBenchRow[] = [];
    for (const args of [
      ['rev-parse', 'HEAD'],
      ['status', '--porcelain'],
    ]) {
      const req: RunRequest = {
        command: gitPath,
        args,
        cwd: '/',
        env: { PATH: '/usr/bin:/bin', GIT_DIR: target.gitDir, GIT_WORK_TREE: repo, LC_ALL: 'C' },
        timeoutMs: 0,
        maxOutputBytes: 1 << 20,
      };
      const direct: number[] = [];
      const helper: number[] = [];
      const gitCall: number[] = [];
      await git(target, args);
      for (let i = 0; i < calls; i++) {
        const sides = [
          async () => direct.push(await timed(() => runDirect(req))),
          async () => helper.push(await timed(() => runViaHelper(req))),
          async () => gitCall.push(await timed(() => git(target, args))),
        ];
        for (const side of i % 2 === 0 ? sides : sides.reverse()) await side();
      }
      const row = {
        command: `git ${args.join(' ')}`,
        directMs: round(median(direct), 2),
        helperMs: round(median(helper), 2),
        gitCallMs: round(median(gitCall), 2),
        ratio: round(median(direct) / median(helper), 2),
      };
      progress(
        `${row.command}: direct ${row.directMs} ms, helper ${row.helperMs} ms, git() ${row.gitCallMs} ms`,
      );
      rows.push(row);
    }
    const worst = Math.max(...rows.map((r) => r.gitCallMs));
    return {
      part: 'git',
      calls,
      processRssMb,
      rows,
      goal: goal(
        'median ms of a git() call from a worker-sized process (the slower command)',
        worst,
        GIT_CALL_GOAL_MS,
      ),
    };
  } finally {
    ballast.length = 0;
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function gitReport(r: GitBenchResult, io: BenchIO): void {
  io.out(`\n== A git call from a ${r.processRssMb} MB process, median of ${r.calls} calls each way ==`);
  for (const line of formatTable(
    ['command', 'direct ms', 'helper ms', 'direct/helper', 'git() ms'],
    r.rows.map((row) => [row.command, row.directMs, row.helperMs, row.ratio, row.gitCallMs]),
  ))
    io.out(line);
  io.out(goalText(r.goal));
}
