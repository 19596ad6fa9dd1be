/**
 * aca as a library: the packed package (`npm pack`) installed into a project of its own, its two
 * examples type-checked against the published declarations and run against the dev server with
 * the scripted model, importing only through the package's `exports`. Then the client API's
 * errors for bad input, which are the errors the command line reports.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AcaClient } from '../../src/api/aca-client';
import { readRunResult, runResultOfFailure } from '../../src/api';
import { loadConfig } from '../../src/config';
import { loadBuiltinScenario } from '../../src/llm/scenario';
import { ScriptedLlmServer } from '../../src/llm/scripted-server';
import { RunNotFoundError, RunStateError, TaskTooLargeError, UserInputError } from '../../src/shared/errors';
import { MAX_TASK_BYTES } from '../../src/shared/task-size';
import type { RunResult } from '../../src/shared/run-types';
import { packedTarball } from '../helpers/packed-package';
import { getTestTemporal } from '../helpers/temporal-env';
import { until } from '../helpers/until';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const FIZZBUZZ = loadBuiltinScenario('demo-fizzbuzz').task!;

/** A project folder with the packed aca installed and every other dependency linked from here. */
async function installPacked(project: string): Promise<void> {
  const tarball = await packedTarball();
  const modules = path.join(project, 'node_modules');
  const installed = path.join(modules, 'aca-agent');
  fs.mkdirSync(installed, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (name === '.bin' || name === 'aca-agent' || name.startsWith('.')) continue;
    fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
  }
}

/** Type-checks and compiles the examples as a user's project would; 'ok' or tsc's complaints. */
async function compileExamples(project: string): Promise<string> {
  fs.writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        // node16 resolution reads the package's `exports`, as a user's project would.
        module: 'node16',
        moduleResolution: 'node16',
        strict: true,
        esModuleInterop: true,
        skipLibCheck: true,
        types: ['node'],
        outDir: 'build',
        rootDir: 'examples',
      },
      include: ['examples'],
    }),
  );
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await run(process.execPath, [tsc, '-p', project], { cwd: project, timeout: 120_000 });
    return 'ok';
  } catch (err) {
    return `tsc failed:\n${(err as { stdout?: string }).stdout ?? String(err)}`;
  }
}

function startProcess(script: string, env: NodeJS.ProcessEnv, cwd: string) {
  const child = spawn(process.execPath, [script], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

describe('aca as a library, from the packed package', () => {
  const temporal = getTestTemporal();
  const project = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-library-'));
  const taskQueue = `library-${process.pid}`;
  let llm: ScriptedLlmServer;
  let worker: { child: ChildProcess; output(): string; exited: Promise<number | null> } | null = null;
  let env: NodeJS.ProcessEnv;
  let compiled = 'not run';

  beforeAll(async () => {
    await installPacked(project);
    fs.cpSync(path.join(ROOT, 'examples'), path.join(project, 'examples'), { recursive: true });
    compiled = await compileExamples(project);
    llm = await new ScriptedLlmServer().start();
    env = {
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      ACA_TASK_QUEUE: taskQueue,
      ACA_HOME: path.join(project, 'aca-home'),
      ACA_MODEL: 'scripted:demo-fizzbuzz',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-scripted',
      DATABASE_URL: '',
      ACA_LOG_LEVEL: 'WARN',
    };
  }, 240_000);

  afterAll(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await llm?.stop();
    fs.rmSync(project, { recursive: true, force: true });
  });

  test('the package exports the client, the worker and the workflows, with declarations', () => {
    const manifest = JSON.parse(
      fs.readFileSync(path.join(project, 'node_modules', 'aca-agent', 'package.json'), 'utf8'),
    );
    expect(Object.keys(manifest.exports)).toEqual(['.', './worker', './workflows', './package.json']);
    for (const entry of ['.', './worker', './workflows']) {
      for (const file of [manifest.exports[entry].types, manifest.exports[entry].default]) {
        expect(fs.existsSync(path.join(project, 'node_modules', 'aca-agent', file))).toBe(true);
      }
    }
    // Only what a user runs: no sources or tests in the package.
    expect(fs.existsSync(path.join(project, 'node_modules', 'aca-agent', 'src'))).toBe(false);
    expect(fs.existsSync(path.join(project, 'node_modules', 'aca-agent', 'test'))).toBe(false);
  });

  test('the examples type-check against the published declarations and compile', () => {
    expect(compiled).toBe('ok');
    expect(fs.existsSync(path.join(project, 'build', 'client-script.js'))).toBe(true);
    expect(fs.existsSync(path.join(project, 'build', 'own-worker', 'worker.js'))).toBe(true);
  });

  test('a worker of your own runs aca next to your workflow; a client script starts, pauses, guides and resumes a run', async () => {
    worker = startProcess(path.join(project, 'build', 'own-worker', 'worker.js'), env, project);
    await until(
      () => worker!.output().includes('worker ready') || worker!.child.exitCode !== null,
      120_000,
      'the worker',
    );
    expect(worker.output()).toContain(`worker ready on task queue ${taskQueue}`);

    const client = spawn(process.execPath, [path.join(project, 'build', 'client-script.js'), FIZZBUZZ], {
      cwd: project,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    client.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    client.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => client.once('exit', resolve));
    if (code !== 0)
      throw new Error(
        `the client script exited with ${code}:\n${stdout}\n${stderr}\nworker:\n${worker.output()}`,
      );
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    // The id made of the task's first words and a tail a person can type (run-ids.ts).
    const id = /^started (implement-fizzbuzz-n-[2-9a-hjkmnp-z]{5})$/.exec(lines[0]!)?.[1];
    expect(id).toBeDefined();
    expect(lines[1]).toMatch(new RegExp(`^paused ${id} in [A-Z]+$`));
    expect(lines[2]).toBe('feedback accepted (1 pending)');
    const result = JSON.parse(lines.at(-1)!) as RunResult;
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    expect(result.transitions.some((t) => t.to === 'PAUSED')).toBe(true);
    expect(result.transitions.some((t) => t.from === 'PAUSED')).toBe(true);
    // The guidance reached the next Coder turn, verbatim.
    const coderPrompts = llm.requests.filter((r) => r.agent === 'coder' && r.step === 0);
    expect(
      coderPrompts.some((r) => r.messages.some((m) => String(m.content).includes('Check n % 15 first'))),
    ).toBe(true);

    // The team's own workflow runs on the same worker.
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const greeting = await new Client({ connection, namespace: temporal.namespace }).workflow.execute(
        'greet',
        {
          taskQueue,
          workflowId: `greet-${process.pid}`,
          args: ['Ada'],
        },
      );
      expect(greeting).toBe('Hello, Ada!');
    } finally {
      await connection.close();
    }

    // Bad input through the API: typed errors with the messages the command line prints.
    const aca = new AcaClient(
      new Client({
        connection: await Connection.connect({ address: temporal.address }),
        namespace: temporal.namespace,
      }),
      loadConfig({ ...env }),
    );
    try {
      await expect(aca.start({ task: '   ' })).rejects.toThrow(
        new UserInputError('the task is empty: aca run "<task>" [options]'),
      );
      await expect(aca.start({ task: 'x', maxIterations: 0 })).rejects.toBeInstanceOf(UserInputError);
      // A task Temporal would refuse later (terminating the run) is refused here, before anything starts.
      const huge = aca.start({ task: 'x'.repeat(1024 * 1024), id: `huge-${process.pid}` });
      await expect(huge).rejects.toBeInstanceOf(TaskTooLargeError);
      await expect(huge).rejects.toMatchObject({ bytes: 1024 * 1024, limit: MAX_TASK_BYTES });
      await expect(aca.temporal.workflow.getHandle(`huge-${process.pid}`).describe()).rejects.toThrow(
        /not found/i,
      );
      await expect(aca.run('no-such-run').state()).rejects.toThrow(new RunNotFoundError('no-such-run'));
      const finished = aca.run(result.workflowId);
      const paused = finished.pause();
      await expect(paused).rejects.toBeInstanceOf(RunStateError);
      await expect(paused).rejects.toThrow(
        `run ${result.workflowId} has ended (COMPLETED); it cannot be paused`,
      );
      await expect(finished.feedback('late')).rejects.toThrow(
        `run ${result.workflowId} has ended; feedback goes only to a running run: aca continue ${result.workflowId} "<instruction>" starts a new run from where it ended`,
      );
    } finally {
      await aca.temporal.connection.close();
    }
  }, 240_000);

  test("a FAILED run's result: the library returns it; a plain Temporal client sees a failure that carries it", async () => {
    const aca = new AcaClient(
      new Client({
        connection: await Connection.connect({ address: temporal.address }),
        namespace: temporal.namespace,
      }),
      loadConfig({ ...env }),
    );
    try {
      // The scripted demo needs two attempts: with one the run ends FAILED max_iterations.
      const run = await aca.start({ task: FIZZBUZZ, maxIterations: 1, warnAt: 1 });
      const result = await run.result();
      expect(result).toMatchObject({ state: 'FAILED', reason: 'max_iterations', iterations: 1 });
      expect(await run.status()).toBe('FAILED');
      expect(await run.state()).toMatchObject({ state: 'FAILED', reason: 'max_iterations' });
      const raw = await run.handle.result().catch((err: unknown) => err);
      expect(raw).toBeInstanceOf(WorkflowFailedError);
      const cause = (raw as WorkflowFailedError).cause;
      expect(cause).toBeInstanceOf(ApplicationFailure);
      expect(cause).toMatchObject({ type: 'AcaRunFailed', nonRetryable: true });
      expect(cause?.message).toMatch(/^FAILED max_iterations after 1 of at most 1 iteration, pass rate /);
      expect(runResultOfFailure(raw)).toEqual(result);
      expect(await readRunResult(aca.temporal.workflow.getHandle(run.id))).toEqual(result);
    } finally {
      await aca.temporal.connection.close();
    }
  }, 180_000);
});
