/**
 * The worker's Prometheus endpoint (ACA_METRICS_PORT), read the way an operator's scraper would.
 * The SDK runtime can be installed once per process, so the worker is `aca worker` in a child
 * process; the model is the scripted server in this process, the run is the demo scenario.
 */
import { readRunResult } from '../../src/shared/run-failure';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { startRunWorkflow } from '../../src/api/aca-client';
import { loadBuiltinScenario, scriptedRunInput } from '../../src/llm/scenario';
import { ScriptedLlmServer } from '../../src/llm/scripted-server';
import type { RunResult } from '../../src/shared/run-types';
import { getFreePort } from '../../src/temporal/dev-server';
import { getTestTemporal } from '../helpers/temporal-env';
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (comments skipped; label values without escapes). */
function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the samples of one metric whose labels include the given ones. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const matching = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (!matching.length) {
    const names = [...new Set(samples.map((s) => s.name))].filter((n) => n.startsWith(name.split('_')[0]));
    throw new Error(`no sample ${name}${JSON.stringify(labels)}; similar metrics: ${names.join(', ')}`);
  }
  return matching.reduce((sum, s) => sum + s.value, 0);
}

/** Dollars per million tokens of the scripted model, given the worker in an ACA_PRICES file. */
const PRICE = { input: 3, output: 15 };

describe('the worker exports Prometheus metrics', () => {
  const temporal = getTestTemporal();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-metrics-'));
  const taskQueue = `metrics-${randomBytes(4).toString('hex')}`;
  const scenario = loadBuiltinScenario('demo-fizzbuzz');
  let llm: ScriptedLlmServer;
  let worker: WorkerProcess;
  let connection: Connection;
  let metricsPort: number;
  let result: RunResult;
  let samples: Sample[];

  beforeAll(async () => {
    const pricesFile = path.join(home, 'prices.json');
    fs.writeFileSync(pricesFile, JSON.stringify({ [`scripted:${scenario.name}`]: PRICE }));
    llm = await new ScriptedLlmServer().start();
    metricsPort = await getFreePort();
    worker = await spawnWorker({
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      ACA_TASK_QUEUE: taskQueue,
      ACA_HOME: home,
      ACA_METRICS_PORT: String(metricsPort),
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-scripted',
      ACA_LOG_PROMPTS: '',
      ACA_PRICES: pricesFile,
    });
    connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection, namespace: temporal.namespace });
    const workflowId = `metrics-demo-${randomBytes(4).toString('hex')}`;
    const handle = await startRunWorkflow(
      client,
      {
        workflowId,
        input: scriptedRunInput(scenario),
      },
      taskQueue,
    );
    result = (await readRunResult(handle)) as RunResult;
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    samples = parsePrometheus(await response.text());
  }, 120_000);

  afterAll(async () => {
    await worker?.kill('SIGTERM');
    await connection?.close();
    await llm?.stop();
  });

  test('the demo run itself succeeded', () => {
    expect(result).toMatchObject({ state: 'SUCCESS', reason: null, iterations: 2 });
  });

  test('aca_runs_finished counts the run by end state and reason', () => {
    expect(total(samples, 'aca_runs_finished', { state: 'SUCCESS', reason: 'none' })).toBe(1);
    expect(total(samples, 'aca_runs_finished')).toBe(1);
  });

  test('aca_iterations counts the coding attempts', () => {
    expect(total(samples, 'aca_iterations', { language: 'python' })).toBe(result.iterations);
  });

  test('aca_tokens and the result count exactly the tokens the model reported', () => {
    // The scripted model's own accounting: the usage it put in each answer it completed.
    const answered = llm.requests.filter((r) => r.status === 200 && r.usage);
    const served = {
      prompt: answered.reduce((sum, r) => sum + r.usage!.prompt, 0),
      completion: answered.reduce((sum, r) => sum + r.usage!.completion, 0),
    };
    expect(served.prompt).toBeGreaterThan(0);
    expect(served.completion).toBeGreaterThan(0);
    expect(total(samples, 'aca_tokens', { kind: 'prompt' })).toBe(served.prompt);
    expect(total(samples, 'aca_tokens', { kind: 'completion' })).toBe(served.completion);
    expect(result.tokens).toEqual({ ...served, cached: 0, reasoning: 0 });
  });

  test('aca_cost_microdollars and the result count what the served tokens cost at the given prices', () => {
    const answered = llm.requests.filter((r) => r.status === 200 && r.usage);
    const perStep = answered.map(
      (r) => (r.usage!.prompt * PRICE.input + r.usage!.completion * PRICE.output) / 1e6,
    );
    const usd = perStep.reduce((a, b) => a + b, 0);
    expect(result.cost!.usd).toBeCloseTo(usd, 9);
    expect(total(samples, 'aca_cost_microdollars')).toBe(
      perStep.reduce((sum, step) => sum + Math.round(step * 1e6), 0),
    );
  });

  test('aca_test_run_duration records one observation per test run', () => {
    expect(total(samples, 'aca_test_run_duration_count', { language: 'python' })).toBe(result.iterations);
    expect(total(samples, 'aca_test_run_duration_sum', { language: 'python' })).toBeGreaterThan(0);
    // Both runs completed (one with a failing test, one all green), in milliseconds.
    expect(total(samples, 'aca_test_run_duration_count', { outcome: 'completed' })).toBe(2);
    const infBucket = samples.find(
      (s) => s.name === 'aca_test_run_duration_bucket' && s.labels.le === '+Inf',
    );
    expect(infBucket?.value).toBe(2);
  });

  test('the SDK metrics are there too, with the temporal_ prefix', () => {
    expect(total(samples, 'temporal_workflow_completed', { task_queue: taskQueue })).toBe(1);
    expect(
      total(samples, 'temporal_activity_execution_latency_count', { task_queue: taskQueue }),
    ).toBeGreaterThan(10);
  });

  test('the worker log keeps prompts and file contents out', () => {
    const log = worker.output();
    expect(log).toContain(`aca worker polling task queue "${taskQueue}"`);
    expect(log).not.toContain(scenario.task ?? '<no task>');
    expect(log).not.toContain('def fizzbuzz');
    expect(log).not.toContain('sk-scripted');
  });
});
