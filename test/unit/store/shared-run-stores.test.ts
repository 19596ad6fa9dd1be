/**
 * Workers on different hosts share no disk. Two worker-like setups here have ACA_HOME folders of
 * their own and one DATABASE_URL: what one saves (a turn's conversation, a test report), the
 * other must load, which is what lets any worker run any step of any run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { Activities } from '../../../src/activities';
import type { AgentStepOutcome } from '../../../src/activities/agent-activities';
import { executeTurnToolCall, openTurn } from '../../../src/agents/agent-turn';
import { reportRef } from '../../../src/store/report-store';
import { loadConfig, type AcaConfig } from '../../../src/config';
import type { Scenario } from '../../../src/llm/scenario';
import { ScriptedLlmServer } from '../../../src/llm/scripted-server';
import type { TestRunReport } from '../../../src/shared/types';
import { createAcaActivities, createRunStores } from '../../../src/worker';
import {
  describePostgres,
  dropSchema,
  isolatedDatabaseUrl,
  tempDir,
  uniqueId,
} from '../../helpers/pg-test-env';

const scenario: Scenario = {
  name: 'two-hosts',
  task: 'Write hello.py',
  agents: {
    coder: [
      [
        { tool_calls: [{ name: 'create_file', arguments: { path: 'hello.py', content: 'print("hi")\n' } }] },
        { tool_calls: [{ name: 'finish', arguments: { summary: 'done' } }] },
      ],
    ],
  },
};

const sampleReport: TestRunReport = {
  outcome: 'completed',
  passed: 1,
  failed: 1,
  errors: 0,
  skipped: 0,
  passRate: 0.5,
  cases: [
    { name: 'test_hello', status: 'passed' },
    { name: 'test_bye', status: 'failed', message: 'NameError: bye' },
  ],
  output: 'FAILED test_hello.py::test_bye - NameError: bye',
  cutBytes: 0,
  durationMs: 321,
  sandbox: 'none',
};

function workerConfig(home: string, databaseUrl: string | null): AcaConfig {
  const env: NodeJS.ProcessEnv = { ...process.env, ACA_HOME: home, ACA_SANDBOX: 'none' };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  else delete env.DATABASE_URL;
  return loadConfig(env);
}

describePostgres('two workers with their own ACA_HOME and one DATABASE_URL', (url) => {
  let llm: ScriptedLlmServer;
  let root: string;
  let databaseUrl: string;
  let schema: string;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    llm = await new ScriptedLlmServer({ scenarios: [scenario] }).start();
    root = tempDir('two-hosts');
    ({ url: databaseUrl, schema } = await isolatedDatabaseUrl(url, 'hosts'));
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await llm?.stop();
    await dropSchema(url, schema);
    fs.rmSync(root, { recursive: true, force: true });
  });

  function worker(name: string): { config: AcaConfig; activities: Activities } {
    const config = workerConfig(path.join(root, name), databaseUrl);
    const { activities, close } = createAcaActivities(config, { openaiBaseUrl: llm.url });
    closers.push(close);
    return { config, activities };
  }

  test("a turn opened and stepped on one worker continues on the other; each loads the other's report", async () => {
    const a = worker('host-a');
    const b = worker('host-b');
    expect(a.config.home).not.toBe(b.config.home);
    const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('WARN') });
    const workspace = path.join(root, 'workspace');
    fs.mkdirSync(workspace);
    const ref = `${uniqueId('wf')}/run-1/coder-1`;
    // The stores each worker uses (one per worker, as createAcaActivities builds them).
    const storesA = createRunStores(a.config);
    const storesB = createRunStores(b.config);
    closers.push(
      () => storesA.close(),
      () => storesB.close(),
    );
    const step = (activities: Activities, stepIndex: number): Promise<AgentStepOutcome> =>
      env.run(activities.agentStep, { ref, model: 'scripted:two-hosts', stepIndex, timeoutMs: 10_000 });

    // Host A opens the turn and takes its first step.
    await openTurn(
      storesA.conversations,
      {
        ref,
        model: 'scripted:two-hosts',
        workspace,
        context: {
          role: 'coder' as const,
          task: 'Write hello.py',
          language: 'python' as const,
          attempt: 1,
          maxIterations: 3,
          protectedPaths: [],
        },
      },
      { loadReport: async () => null, recallLessons: async () => [] },
    );
    const first = await step(a.activities, 0);
    expect(first.toolCalls.map((c) => c.name)).toEqual(['create_file']);
    const modelCalls = llm.requests.length;

    // Host B runs the tool call A's step decided, from the conversation A saved.
    const outcome = await executeTurnToolCall(storesB.conversations, ref, first.toolCalls[0]!.id);
    expect(outcome).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(workspace, 'hello.py'), 'utf8')).toBe('print("hi")\n');

    // A retry of step 0 landing on host B returns A's saved decision without asking the model.
    expect(await step(b.activities, 0)).toEqual(first);
    expect(llm.requests.length).toBe(modelCalls);

    // Host B takes the next step: the model sees the tool answer that B stored for A's call.
    const second = await step(b.activities, 1);
    expect(second.finished).toEqual({ tool: 'finish', summary: 'done' });
    const lastRequest = llm.requests[llm.requests.length - 1]!;
    expect(lastRequest.messages.filter((m) => m.role === 'tool')).toHaveLength(1);

    // Reports, through the same stores the workers use: saved on one host, loaded on the other.
    const runKey = `${uniqueId('wf')}/run-1`;
    await storesA.reports.saveReport(reportRef(runKey, 1), sampleReport);
    expect(await storesB.reports.loadReport(reportRef(runKey, 1))).toEqual(sampleReport);
    await storesB.reports.saveReport(reportRef(runKey, 2), { ...sampleReport, failed: 0, passRate: 1 });
    expect(await storesA.reports.loadReport(reportRef(runKey, 2))).toMatchObject({ failed: 0, passRate: 1 });

    // Nothing went to either worker's disk.
    for (const home of [a.config.home, b.config.home])
      expect(fs.existsSync(path.join(home, 'runs'))).toBe(false);
  });

  test('without DATABASE_URL each worker keeps its own files (the single-host default)', async () => {
    const a = createRunStores(workerConfig(path.join(root, 'files-a'), null));
    const b = createRunStores(workerConfig(path.join(root, 'files-b'), null));
    const ref = reportRef(`${uniqueId('wf')}/run-1`, 1);
    await a.reports.saveReport(ref, sampleReport);
    expect(await a.reports.loadReport(ref)).toEqual(sampleReport);
    expect(await b.reports.loadReport(ref)).toBeNull();
    expect(fs.existsSync(path.join(root, 'files-a', 'runs', `${ref}.json`))).toBe(true);
  });
});
