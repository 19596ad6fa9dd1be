/**
 * Sandbox overhead benchmark: the same small pytest suite run bare (mode
 * 'none') and inside bubblewrap, interleaved so machine noise hits both alike;
 * medians are compared. The suite is given as the run's acceptance tests, so
 * both sides judge it in the verdict process (run-test-suite.ts); the plain bare
 * run of the same suite (no acceptance tests, one pytest process with aca's
 * plugin) is timed too. Also times the sandbox's fixed start cost alone
 * (starting it around /bin/true). Goal: sandbox/bare ratio at most 1.10.
 *
 * Run: npm run bench:sandbox -- --reps N
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HOST_TOOL_ENV } from '../src/shared/executables';
import {
  bwrapCommand,
  bwrapTools,
  checkSandboxAvailable,
  DEFAULT_SANDBOX_LIMITS,
  isRoot,
  pickSandboxUid,
  runTestSuite,
} from '../src/sandbox';
import type { SandboxMode } from '../src/shared/types';
import { formatPairs, goal, goalText, median, round, type BenchIO, type Goal } from './bench-util';

export const SANDBOX_GOAL = 1.1;

export interface SandboxBenchResult {
  part: 'sandbox';
  tests: number;
  runs: number;
  bareMedianMs: number;
  sandboxMedianMs: number;
  ratio: number;
  /** The same suite bare without acceptance tests: one pytest process, no verdict process. */
  plainBareMedianMs: number;
  /** sandboxMedianMs / plainBareMedianMs: the verdict process and the sandbox together. */
  plainRatio: number;
  /** Median time to start bwrap (same profile as a real run) around /bin/true and see it exit. */
  startupMs: number;
  /** The same for /bin/true without bwrap: what any process start costs here. */
  bareStartupMs: number;
  /** startupMs - bareStartupMs: what the sandbox adds to every test run. */
  sandboxStartCostMs: number;
  bareMs: number[];
  sandboxMs: number[];
  goal: Goal;
}

const TEST_COUNT = 20;

function benchSuite(): string {
  const tests: string[] = ['import json, math, re', ''];
  for (let i = 0; i < TEST_COUNT; i++) {
    tests.push(
      `def test_case_${i}():`,
      `    data = json.loads(json.dumps({"n": ${i}, "items": list(range(${i * 10}))}))`,
      `    assert data["n"] == ${i}`,
      `    assert math.isclose(sum(data["items"]), ${(i * 10 * (i * 10 - 1)) / 2})`,
      `    assert re.fullmatch(r"case-\\d+", "case-${i}")`,
      '',
    );
  }
  return tests.join('\n');
}

async function timeSuite(workspace: string, mode: SandboxMode, acceptanceDir?: string): Promise<number> {
  const started = process.hrtime.bigint();
  const report = await runTestSuite({
    workspace,
    language: 'python',
    mode,
    ...(acceptanceDir ? { acceptance: { sourceDir: acceptanceDir, files: ['test_bench.py'] } } : {}),
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (report.outcome !== 'completed' || report.passed !== TEST_COUNT) {
    throw new Error(
      `bench suite did not pass in mode ${mode}: ${report.outcome} ${report.message ?? ''}\n${report.output}`,
    );
  }
  return ms;
}

/** Spawns `command args` and resolves with the milliseconds until it exited 0. */
async function timeSpawn(command: string, args: string[]): Promise<number> {
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { env: HOST_TOOL_ENV, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`)),
    );
  });
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Starts an empty sandbox (same profile as a real run) around /bin/true. */
async function timeStartup(workspace: string): Promise<number> {
  const tools = bwrapTools();
  if (!tools) throw new Error('bubblewrap is not available');
  const { command, args } = bwrapCommand({
    tools,
    workspace,
    needsNode: false,
    limits: DEFAULT_SANDBOX_LIMITS,
    env: { PATH: '/usr/bin:/bin' },
    argv: ['/bin/true'],
    ...(isRoot() ? { uid: pickSandboxUid() } : {}),
  });
  return timeSpawn(command, args);
}

export async function runSandboxBench(
  opts: { runs: number },
  progress: (message: string) => void = () => undefined,
): Promise<SandboxBenchResult> {
  const runs = Math.max(1, Math.floor(opts.runs));
  const availability = checkSandboxAvailable('bwrap');
  if (!availability.ok) throw new Error(availability.message);
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-sandbox-bench-'));
  const originals = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-sandbox-bench-tests-'));
  try {
    fs.writeFileSync(path.join(workspace, 'test_bench.py'), benchSuite());
    fs.writeFileSync(path.join(originals, 'test_bench.py'), benchSuite());
    fs.chmodSync(originals, 0o755);
    // The bare /bin/true start does not lend the workspace; the sandbox user only needs to enter it.
    fs.chmodSync(workspace, 0o755);
    // Warm the page cache and python's imports once for both sides.
    progress('warm-up: one bare and one sandboxed run (not measured)');
    await timeSuite(workspace, 'none', originals);
    await timeSuite(workspace, 'bwrap', originals);
    const bare: number[] = [];
    const plainBare: number[] = [];
    const sandboxed: number[] = [];
    const startup: number[] = [];
    const bareStartup: number[] = [];
    for (let i = 0; i < runs; i++) {
      // Alternate which goes first so drift (thermal, other load) does not favour one side.
      if (i % 2 === 0) {
        bare.push(await timeSuite(workspace, 'none', originals));
        sandboxed.push(await timeSuite(workspace, 'bwrap', originals));
      } else {
        sandboxed.push(await timeSuite(workspace, 'bwrap', originals));
        bare.push(await timeSuite(workspace, 'none', originals));
      }
      plainBare.push(await timeSuite(workspace, 'none'));
      startup.push(await timeStartup(workspace));
      bareStartup.push(await timeSpawn('/bin/true', []));
      progress(
        `rep ${i + 1}/${runs}: bare ${round(bare[i])} ms, sandboxed ${round(sandboxed[i])} ms, bwrap start ${round(startup[i])} ms`,
      );
    }
    const bareMedianMs = round(median(bare));
    const sandboxMedianMs = round(median(sandboxed));
    const ratio = round(sandboxMedianMs / bareMedianMs, 3);
    const plainBareMedianMs = round(median(plainBare));
    const startupMs = round(median(startup));
    const bareStartupMs = round(median(bareStartup));
    return {
      part: 'sandbox',
      tests: TEST_COUNT,
      runs,
      bareMedianMs,
      sandboxMedianMs,
      ratio,
      plainBareMedianMs,
      plainRatio: round(sandboxMedianMs / plainBareMedianMs, 3),
      startupMs,
      bareStartupMs,
      sandboxStartCostMs: round(startupMs - bareStartupMs),
      bareMs: bare.map((ms) => round(ms)),
      sandboxMs: sandboxed.map((ms) => round(ms)),
      goal: goal(
        'median sandboxed / median bare time of the same pytest suite, judged in the verdict process',
        ratio,
        SANDBOX_GOAL,
      ),
    };
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(originals, { recursive: true, force: true });
  }
}

export function sandboxReport(r: SandboxBenchResult, io: BenchIO): void {
  io.out(
    `\n== Sandbox cost: the same pytest suite (${r.tests} tests, as acceptance tests) bare and in bubblewrap, ${r.runs} runs each ==`,
  );
  for (const line of formatPairs([
    ['bare median', `${r.bareMedianMs} ms`],
    ['sandboxed median', `${r.sandboxMedianMs} ms`],
    ['ratio', r.ratio],
    ['bare, no verdict process', `${r.plainBareMedianMs} ms (sandboxed / this: ${r.plainRatio})`],
    ['sandbox start', `${r.startupMs} ms (bwrap around /bin/true; /bin/true alone ${r.bareStartupMs} ms)`],
    ['start cost per run', `${r.sandboxStartCostMs} ms`],
    ['result', goalText(r.goal)],
  ]))
    io.out(line);
}
