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
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { createCommandActivities } from '../src/activities/command-activities';
import { createRepoActivities, type PreparedRun } from '../src/activities/repo-activities';
import { HostRuns } from '../src/repo';
import { checkSandboxAvailable, runAgentCommand } from '../src/sandbox';
import { HOST_TOOL_ENV } from '../src/shared/executables';
import type { RunPlace } from '../src/shared/run-types';
import { FileConversationStore } from '../src/store/conversation-store';
import { FileReportStore } from '../src/store/report-store';
import { quietLogger, type BenchStack } from './bench-stack';
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
  /** The same `true` as a run_command call through a worker on a Temporal dev server. */
  asActivity?: RunCommandRoundTrips;
}

export interface RunCommandRoundTrips {
  /** Calls per workflow, one after another. */
  calls: number;
  repetitions: number;
  /** Median over repetitions of the workflow's wall time per call (ms). */
  perCallMs: number;
  /** Each repetition's wall time per call (ms). */
  perCallRunsMs: number[];
  /** perCallMs - sandboxedMedianMs: Temporal's dispatch, the conversation's load and save, the output's save. */
  aboveCommandMs: number;
}

/** A small work tree, as a run's would be early on: a few folders of source files. */
const WORK_TREE_FILES = 200;

function writeWorkTree(dir: string): void {
  for (let i = 0; i < WORK_TREE_FILES; i++) {
    const pkg = path.join(dir, `pkg${i % 10}`);
    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(path.join(pkg, `module_${i}.py`), `VALUE = ${i}\n`);
  }
}

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

/** Calls per workflow, and at most as many workflows as this, of the Temporal round trip. */
const ROUND_TRIP_CALLS = 10;
const ROUND_TRIP_REPETITIONS = 3;

export async function runRunCommandBench(
  /** With `stack`, the call through Temporal is timed too (on the stack's server). */
  opts: { runs: number; stack?: () => Promise<BenchStack> },
  progress: (message: string) => void = () => undefined,
): Promise<RunCommandBenchResult> {
  const runs = Math.max(1, Math.floor(opts.runs));
  const availability = checkSandboxAvailable('bwrap');
  if (!availability.ok) throw new Error(availability.message);
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-run-command-bench-'));
  try {
    writeWorkTree(workspace);
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
    const trips = opts.stack
      ? await measureRunCommandRoundTrips(
          await opts.stack(),
          ROUND_TRIP_CALLS,
          Math.min(runs, ROUND_TRIP_REPETITIONS),
          progress,
        )
      : null;
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
      ...(trips
        ? { asActivity: { ...trips, aboveCommandMs: round(trips.perCallMs - sandboxedMedianMs) } }
        : {}),
    };
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

const author = { name: 'aca', email: 'aca@localhost' };

/**
 * `calls` run_command calls of `true` in sequence, each an activity through the stack's server and
 * a worker of its own, on a run prepared here (a Coder's turn, no git store).
 */
export async function measureRunCommandRoundTrips(
  stack: BenchStack,
  calls: number,
  repetitions: number,
  progress: (message: string) => void = () => undefined,
): Promise<Omit<RunCommandRoundTrips, 'aboveCommandMs'>> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-run-command-rt-'));
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, 'run-command-workflow.ts'),
    logger: quietLogger,
  });
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  const perCall: number[] = [];
  try {
    const host = new HostRuns({ store: null, home, workspacesRoot: path.join(home, 'workspaces'), author });
    const repo = createRepoActivities({ gitAuthor: author, sandboxMode: 'none', gitStore: null, host });
    const prepared = (await new MockActivityEnvironment().run(repo.prepareRun, {
      workflowId: 'bench-run-command',
      workspace: path.join(home, 'workspaces', 'bench-run-command'),
      language: 'python' as const,
      repo: null,
      testCommand: null,
      setupCommand: null,
    })) as PreparedRun;
    const place: RunPlace = prepared.place;
    const headCommit = prepared.startCommit;
    // The same work tree as the direct calls', so that the difference is Temporal's and the stores'.
    writeWorkTree(place.workTree);
    const store = new FileConversationStore(path.join(home, 'conversations'));
    const activities = createCommandActivities({
      store,
      reports: new FileReportStore(path.join(home, 'conversations')),
      host,
      sandboxMode: 'bwrap',
    });
    for (let rep = 0; rep < repetitions; rep++) {
      const ref = `bench-run-command/rep-${rep}/coder-1`;
      const ids = Array.from({ length: calls }, (_, i) => `call_${i}`);
      await store.save({
        ref,
        role: 'coder',
        model: 'bench',
        language: 'python',
        workspace: place.workTree,
        protectedPaths: [],
        entries: [
          { kind: 'system', content: 'coder' },
          { kind: 'user', content: 'run true' },
          {
            kind: 'assistant',
            content: null,
            toolCalls: ids.map((id) => ({ id, name: 'run_command', arguments: '{"command":"true"}' })),
          },
        ],
        toolResults: {},
        steps: [],
        offered: { runCommand: true, mcp: [] },
      });
      const taskQueue = `bench-run-command-${randomBytes(4).toString('hex')}`;
      const worker = await Worker.create({
        connection,
        namespace: stack.config.namespace,
        taskQueue,
        workflowBundle: { code },
        activities,
      });
      await worker.runUntil(async () => {
        const started = performance.now();
        const handle = await stack.client.workflow.start('runCommandsWorkflow', {
          taskQueue,
          workflowId: taskQueue,
          args: [ids.map((toolCallId) => ({ ref, toolCallId, place, headCommit, execution: 'bench' }))],
        });
        await handle.result();
        perCall.push((performance.now() - started) / calls);
      });
      const answers = (await store.load(ref)).toolResults;
      if (ids.some((id) => (answers[id] as { exit_code?: unknown } | undefined)?.exit_code !== 0))
        throw new Error('a run_command call of true did not exit 0');
      progress(`round trips ${rep + 1}/${repetitions}: ${round(perCall[rep])} ms per call`);
    }
  } finally {
    await connection.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
  return {
    calls,
    repetitions,
    perCallMs: round(median(perCall)),
    perCallRunsMs: perCall.map((ms) => round(ms)),
  };
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
    ...(r.asActivity
      ? ([
          [
            'as an activity',
            `${r.asActivity.perCallMs} ms per call (${r.asActivity.calls} calls in a workflow, median of ${r.asActivity.repetitions})`,
          ],
          ['above the command', `${r.asActivity.aboveCommandMs} ms per call`],
        ] as Array<[string, string]>)
      : []),
  ]))
    io.out(line);
}
