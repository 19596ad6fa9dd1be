/**
 * Later runs learn from earlier failures: the Planner's request (as the scripted model server
 * recorded it) carries the analysis of a similar task's failure, and what fixed it when known.
 * Runs twice: on the embedded PGlite the worker opens by default (its thread, its folder lock, and
 * `aca memory search` reading a snapshot while the worker holds the folder), and on Postgres.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LOCK_FILE } from '../../src/memory/data-dir-lock';
import { loadBuiltinScenario, type Scenario } from '../../src/llm/scenario';
import type { RecordedRequest } from '../../src/llm/scripted-server';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { runCli } from '../helpers/run-cli';
import { describePostgres, dropSchema, isolatedDatabaseUrl } from '../helpers/pg-test-env';

/** A built-in scenario whose Reflector names a cause no other run has stored. */
function taggedScenario(base: string, name: string, rootCause: string): Scenario {
  const scenario = structuredClone(loadBuiltinScenario(base));
  scenario.name = name;
  delete scenario.match;
  for (const turn of scenario.agents.reflector ?? []) {
    for (const step of turn) {
      for (const call of step.tool_calls ?? []) {
        if (call.name === 'submit_analysis' && typeof call.arguments === 'object')
          call.arguments.root_cause = rootCause;
      }
    }
  }
  return scenario;
}

function plannerPrompt(requests: RecordedRequest[], task: string): string {
  const found = requests.find(
    (r) =>
      r.agent === 'planner' &&
      r.messages.some((m) => m.role === 'user' && typeof m.content === 'string' && m.content.includes(task)),
  );
  if (!found) throw new Error(`no Planner request for task "${task}"`);
  return found.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
}

describe('failure memory teaches the Planner, on the embedded database', () => learningSuite(null));
describePostgres('failure memory teaches the Planner, on Postgres', (url) => learningSuite(url));

function learningSuite(sharedUrl: string | null): void {
  const tag = randomBytes(4).toString('hex');
  const failedCause = `add subtracts its arguments instead of adding them (memory ${tag})`;
  const fixedCause = `fizzbuzz tests multiples of 3 before multiples of 15 (memory ${tag})`;
  let h: Harness;
  let schema: string | null = null;

  beforeAll(async () => {
    let databaseUrl = '';
    if (sharedUrl) ({ url: databaseUrl, schema } = await isolatedDatabaseUrl(sharedUrl, 'learning'));
    h = await createHarness({
      env: { DATABASE_URL: databaseUrl },
      scenarios: [
        taggedScenario('never-passes', `never-passes-${tag}`, failedCause),
        taggedScenario('demo-fizzbuzz', `fizzbuzz-${tag}`, fixedCause),
      ],
    });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
    if (sharedUrl && schema) await dropSchema(sharedUrl, schema);
  });

  test("a failed run's analysis reaches the Planner of a later, similar task", async () => {
    const firstTask = `Implement add(a, b) in calc_${tag}.py returning the sum of a and b.`;
    const first = await h.start(`never-passes-${tag}`, { task: firstTask, maxIterations: 1, warnAt: 1 });
    expect((await h.result(first)).state).toBe('FAILED');
    expect(plannerPrompt(h.llm.requests, firstTask)).not.toContain(failedCause);

    const laterTask = `Implement add(a, b) in calc_${tag}.py so that it returns the sum of the numbers a and b.`;
    const later = await h.start(`never-passes-${tag}`, { task: laterTask, maxIterations: 1, warnAt: 1 });
    await h.result(later);
    const prompt = plannerPrompt(h.llm.requests, laterTask);
    expect(prompt).toContain('Lessons from similar past failures');
    expect(prompt).toContain(failedCause);
    expect(prompt).toContain('Return a + b.');
  });

  test('when a run succeeds after failing, what fixed it is offered too', async () => {
    const scenario = loadBuiltinScenario('demo-fizzbuzz');
    const firstTask = `${scenario.task} Module fizzbuzz_${tag}.`;
    const first = await h.start(`fizzbuzz-${tag}`, { task: firstTask });
    const result = await h.result(first);
    expect(result.state).toBe('SUCCESS');
    expect(result.iterations).toBe(2);

    const laterTask = `${scenario.task} Put it in module fizzbuzz_${tag}, please.`;
    const later = await h.start(`fizzbuzz-${tag}`, { task: laterTask });
    await h.result(later);
    const prompt = plannerPrompt(h.llm.requests, laterTask);
    expect(prompt).toContain(fixedCause);
    expect(prompt).toMatch(/What finally fixed it: Attempt 2 passed after: .+/);
    expect(prompt).toContain('Test n % 15 == 0 first');
  });

  test('`aca memory search` finds the stored failures, as a table and as JSON', async () => {
    // Runs after the tests above; with the embedded database the worker holds it, so the
    // command reads a snapshot, which is the situation a user is in while a worker runs.
    const env = { ACA_HOME: h.home, DATABASE_URL: h.config.databaseUrl ?? '' };
    if (!sharedUrl) expect(fs.existsSync(path.join(h.home, 'memory', LOCK_FILE))).toBe(true);
    const json = await runCli(['memory', 'search', `add subtracts arguments memory ${tag}`, '--json'], env);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const found = JSON.parse(json.stdout) as Array<{
      rootCause: string;
      task: string;
      status: string;
      score: number;
    }>;
    expect(found.length).toBeGreaterThan(0);
    expect(found[0].rootCause).toBe(failedCause);
    expect(found[0].status).toBe('failed');

    const table = await runCli(['memory', 'search', `fizzbuzz multiples of 15 memory ${tag}`], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/SCORE.*ROOT CAUSE/);
    expect(table.stdout).toContain('fizzbuzz tests multiples');

    const empty = await runCli(['memory', 'search', '  '], env);
    expect(empty.code).toBe(2);
  });
}
