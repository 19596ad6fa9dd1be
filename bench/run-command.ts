/**
 * What an agent's command costs beyond the command itself: `true` through runAgentCommand (the
 * test run's launch path: the workspace lent to a sandbox uid, the cgroup, bubblewrap, seccomp,
 * the keyring, the sweep afterwards) against `bash -c true` spawned bare from this process,
 * interleaved, medians compared. The sandboxed side is timed with a writable and with a read-only
 * work tree (a Coder's and a Planner's command).
 *
 * Run: npm run bench:run-command -- --reps N (or npm run bench -- run-command)
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkSandboxAvailable, runAgentCommand } from '../src/sandbox';
import { HOST_TOOL_ENV } from '../src/shared/executables';
import { formatPairs, median, round, type BenchIO } from './bench-util';

export interface RunCommandBenchResult {
  part: 'run-command';
  runs: number;
  /** Files in the work tree the command is given (lending it walks them). */
  workTreeFiles: number;
  bareMedianMs: number;
  sandboxedMedianMs: number;
  readOnlyMedianMs: number;
  /** sandboxedMedianMs / bareMedianMs. */
  ratio: number;
  /** sandboxedMedianMs - bareMedianMs: what each run_command call adds on this host. */
  addedMs: number;
  bareMs: number[];
  sandboxedMs: number[];
  readOnlyMs: number[];
}

/** A small work tree, as a run's would be early on: a few folders of source files. */
const WORK_TREE_FILES = 200;

async function timeBare(workspace: string): Promise<number> {
  const started = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('/bin/bash', ['-c', 'true'], { cwd: workspace, env: HOST_TOOL_ENV, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`bash -c true exited with ${code}`)),
    );
  });
  return Number(process.hrtime.bigint() - started) / 1e6;
}

async function timeSandboxed(workspace: string, readOnly: boolean): Promise<number> {
  const started = process.hrtime.bigint();
  const result = await runAgentCommand({
    workspace,
    command: 'true',
    timeoutMs: 30_000,
    mode: 'bwrap',
    readOnly,
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.exitCode !== 0)
    throw new Error(`true exited with ${result.exitCode} in the sandbox: ${result.stderr}`);
  return ms;
}

export async function runRunCommandBench(
  opts: { runs: number },
  progress: (message: string) => void = () => undefined,
): Promise<RunCommandBenchResult> {
  const runs = Math.max(1, Math.floor(opts.runs));
  const availability = checkSandboxAvailable('bwrap');
  if (!availability.ok) throw new Error(availability.message);
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-run-command-bench-'));
  try {
    for (let i = 0; i < WORK_TREE_FILES; i++) {
      const dir = path.join(workspace, `pkg${i % 10}`);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `module_${i}.py`), `VALUE = ${i}\n`);
    }
    progress('warm-up: one of each (not measured)');
    await timeBare(workspace);
    await timeSandboxed(workspace, false);
    await timeSandboxed(workspace, true);
    const bare: number[] = [];
    const sandboxed: number[] = [];
    const readOnly: number[] = [];
    for (let i = 0; i < runs; i++) {
      // Alternate the order so that drift on the machine does not favour one side.
      if (i % 2 === 0) {
        bare.push(await timeBare(workspace));
        sandboxed.push(await timeSandboxed(workspace, false));
        readOnly.push(await timeSandboxed(workspace, true));
      } else {
        readOnly.push(await timeSandboxed(workspace, true));
        sandboxed.push(await timeSandboxed(workspace, false));
        bare.push(await timeBare(workspace));
      }
      progress(
        `rep ${i + 1}/${runs}: bare ${round(bare[i])} ms, sandboxed ${round(sandboxed[i])} ms, read-only ${round(readOnly[i])} ms`,
      );
    }
    const bareMedianMs = round(median(bare));
    const sandboxedMedianMs = round(median(sandboxed));
    return {
      part: 'run-command',
      runs,
      workTreeFiles: WORK_TREE_FILES,
      bareMedianMs,
      sandboxedMedianMs,
      readOnlyMedianMs: round(median(readOnly)),
      ratio: round(sandboxedMedianMs / bareMedianMs, 1),
      addedMs: round(sandboxedMedianMs - bareMedianMs),
      bareMs: bare.map((ms) => round(ms)),
      sandboxedMs: sandboxed.map((ms) => round(ms)),
      readOnlyMs: readOnly.map((ms) => round(ms)),
    };
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

export function runCommandReport(r: RunCommandBenchResult, io: BenchIO): void {
  io.out(
    `\n== run_command cost: \`true\` through runAgentCommand vs \`bash -c true\` bare, ${r.runs} runs each (work tree of ${r.workTreeFiles} files) ==`,
  );
  for (const line of formatPairs([
    ['bare median', `${r.bareMedianMs} ms`],
    ['sandboxed median', `${r.sandboxedMedianMs} ms`],
    ['read-only median', `${r.readOnlyMedianMs} ms`],
    ['ratio', r.ratio],
    ['added per call', `${r.addedMs} ms`],
  ]))
    io.out(line);
}
