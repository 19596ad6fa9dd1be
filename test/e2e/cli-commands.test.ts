/**
 * The `aca` commands a user drives a run with, each run as the built command against a real
 * worker, Temporal server and the scripted model: exit codes and output as docs/contract.md
 * (section 1) states them.
 */
import { readRunResult } from '../../src/shared/run-failure';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadBuiltinScenario, loadScenarios } from '../../src/llm/scenario';
import type { RunResult, RunSnapshot } from '../../src/shared/run-types';
import { getFreePort } from '../../src/temporal/dev-server';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { demoRunArgs, runCli } from '../helpers/run-cli';
import { until } from '../helpers/until';
import { codingAgentWorkflow } from '../../src/workflows';
import { stateQuery } from '../../src/workflows/signals';

const FIZZBUZZ = loadBuiltinScenario('demo-fizzbuzz').task!;
const NEVER_PASSES = loadBuiltinScenario('never-passes').task!;
const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');

describe('aca commands on a live run', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;
  const newId = (label: string) => `cli-${label}-${randomBytes(3).toString('hex')}`;
  const fizzbuzzRun = demoRunArgs;

  beforeAll(async () => {
    // A price for the demo model, as a user's ACA_PRICES file gives one, so runs have a cost.
    const prices = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aca-prices-')), 'prices.json');
    fs.writeFileSync(prices, JSON.stringify({ 'scripted:demo-fizzbuzz': { input: 10, output: 30 } }));
    h = await createHarness({
      scenarios: [...loadScenarios(), ...loadScenarios(TEST_SCENARIOS)],
      env: { ACA_PRICES: prices },
    });
    await h.startWorker();
    env = h.cliEnv();
  });
  afterEach(() => h.llm.setDelay(0));
  afterAll(async () => {
    await h?.close();
  });

  const ids: { succeeded?: string; failed?: string } = {};

  test('aca run follows the run to SUCCESS, exit 0; --json prints the outcome object', async () => {
    const id = newId('json');
    const r = await runCli(fizzbuzzRun(id, '--json'), env);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(result).toMatchObject({
      workflowId: id,
      state: 'SUCCESS',
      reason: null,
      iterations: 2,
      maxIterations: 15,
      passRate: 1,
      tests: { failed: 0, errors: 0 },
    });
    expect(result.tests.passed).toBeGreaterThan(0);
    expect(path.isAbsolute(result.workspace)).toBe(true);
    expect(fs.readFileSync(path.join(result.workspace, 'fizzbuzz.py'), 'utf8')).toContain('n % 15 == 0');
    expect(result.files).toContain('fizzbuzz.py');
    expect(result.tokens.prompt).toBeGreaterThan(0);
    expect(result.transitions[0]).toMatchObject({ from: 'INIT', to: 'PLANNING' });
    expect(result.transitions.at(-1)).toMatchObject({ to: 'SUCCESS' });
    // A run without --repo has a repository of its own: a base, a commit per attempt, a diff.
    expect(result).toMatchObject({ repo: null, branch: `aca/${id}`, baseline: null });
    expect(result.attempts.map((a) => a.iteration)).toEqual([1, 2]);
    expect(result.headCommit).toBe(result.attempts[1]!.commit);
    expect(result.changedFiles.map((f) => f.path)).toContain('fizzbuzz.py');
    expect(fs.existsSync(path.join(result.workspace, '.git'))).toBe(false);
    const diff = await runCli(['diff', id], env);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('+++ b/fizzbuzz.py');
    ids.succeeded = id;
  });

  test('aca run of a run that fails: exit 1 and the reason on the summary line', async () => {
    const id = newId('fails');
    const r = await runCli(
      [
        'run',
        NEVER_PASSES,
        '--model',
        'scripted:never-passes',
        '--id',
        id,
        '--max-iterations',
        '1',
        '--warn-at',
        '1',
      ],
      env,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FAILED \(max_iterations\) after 1 iteration of at most 1$/m);
    ids.failed = id;
  });

  test('--detach prints the id at once; status, result --no-wait and result follow the run', async () => {
    h.llm.setDelay(400);
    const id = newId('detach');
    const started = await runCli(fizzbuzzRun(id, '--detach'), env);
    expect(started).toMatchObject({ code: 0, stdout: `${id}\n` });

    const status = await runCli(['status', id, '--json'], env);
    expect(status.code).toBe(0);
    const snapshot = JSON.parse(status.stdout) as RunSnapshot;
    expect(['INIT', 'PLANNING', 'CODING', 'TESTING', 'REFLECTING']).toContain(snapshot.state);
    expect(snapshot.maxIterations).toBe(15);

    const early = await runCli(['result', id, '--no-wait'], env);
    expect(early.code).toBe(0);
    expect(early.stdout).toMatch(
      new RegExp(`^${id} has not ended yet: (PLANNING|CODING|TESTING|REFLECTING)$`, 'm'),
    );
    // The slow model kept the run going for the looks above; the rest of it need not wait.
    h.llm.setDelay(0);

    const final = await runCli(['result', id, '--json'], env);
    expect(final.code).toBe(0);
    expect(JSON.parse(final.stdout)).toMatchObject({ workflowId: id, state: 'SUCCESS' });

    const ended = await runCli(['status', id, '--json'], env);
    expect(JSON.parse(ended.stdout)).toMatchObject({ state: 'SUCCESS' });
  });

  test('aca cancel: exit 0, the run ends FAILED cancelled, and its result exits 4', async () => {
    h.llm.setDelay(1000);
    const id = newId('cancel');
    expect((await runCli(fizzbuzzRun(id, '--detach'), env)).code).toBe(0);
    const cancelled = await runCli(['cancel', id], env);
    expect(cancelled.code).toBe(0);
    const result = await runCli(['result', id, '--json'], env);
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout)).toMatchObject({ state: 'FAILED', reason: 'cancelled' });
    await h.recordHistory(h.client.workflow.getHandle(id), 'cancelled');
    const again = await runCli(['cancel', id], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/has already ended/);
  });

  test('pause and resume in the wrong state exit 2 with the reason', async () => {
    const ended = await runCli(['pause', ids.succeeded!], env);
    expect(ended.code).toBe(2);
    expect(ended.stderr.trim()).toMatch(/^aca: run .* has ended \(COMPLETED\); it cannot be paused$/);

    h.llm.setDelay(1000);
    const id = newId('pause');
    expect((await runCli(fizzbuzzRun(id, '--detach'), env)).code).toBe(0);
    const notPaused = await runCli(['resume', id], env);
    expect(notPaused.code).toBe(2);
    expect(notPaused.stderr.trim()).toBe(`aca: run ${id} is not paused`);
    expect((await runCli(['pause', id], env)).code).toBe(0);
    const twice = await runCli(['pause', id], env);
    expect(twice.code).toBe(2);
    expect(twice.stderr.trim()).toBe(`aca: run ${id} is already paused`);
    await runCli(['cancel', id], env);
  });

  test('aca feedback reaches the next Coder turn; after the end it is refused with exit 2', async () => {
    h.llm.setDelay(500);
    const id = newId('feedback');
    const note = `Prefer a dictionary lookup (note ${randomBytes(3).toString('hex')})`;
    expect((await runCli(fizzbuzzRun(id, '--detach'), env)).code).toBe(0);
    const handle = h.client.workflow.getHandle<typeof codingAgentWorkflow>(id);
    // Sent while the first attempt is under way, it belongs to the second Coder turn.
    await until(
      async () => (await handle.query(stateQuery)).state === 'CODING',
      60_000,
      'the first Coder turn',
    );
    const sent = await runCli(['feedback', id, note], env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^Feedback delivered to .*; the next Coder turn receives it/);
    // The slow model held the first attempt open for the feedback; the rest of the run need not wait.
    h.llm.setDelay(0);
    await readRunResult(handle);
    await h.recordHistory(handle, 'feedback');
    const coderPrompts = h.llm.requests
      .filter((r) => r.agent === 'coder' && r.messages.some((m) => String(m.content).includes(FIZZBUZZ)))
      .filter((r) => r.step === 0)
      .map((r) => r.messages.map((m) => String(m.content ?? '')).join('\n'));
    const withNote = coderPrompts.filter((p) => p.includes(note));
    expect(withNote.length).toBeGreaterThanOrEqual(1);

    const late = await runCli(['feedback', id, 'too late'], env);
    expect(late.code).toBe(2);
    expect(late.stderr.trim()).toBe(
      `aca: run ${id} has ended; feedback goes only to a running run: aca continue ${id} "<instruction>" starts a new run from where it ended`,
    );
  });

  test('--max-steps ends a turn that keeps working but never finishes, apart from the no-progress rule', async () => {
    const id = newId('steps');
    const task = loadScenarios(TEST_SCENARIOS).find((s) => s.name === 'keeps-listing')!.task!;
    const run = ['run', task, '--model', 'scripted:keeps-listing', '--id', id, '--max-iterations', '1'];
    const r = await runCli([...run, '--max-steps', '4', '--json'], env);
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as RunResult;
    // Every step listed files successfully: the no-progress rule (3 idle steps) never applied.
    expect(result.error).toBe('coder did not call its finishing tool within 4 steps');
    const coderSteps = h.llm.requests.filter((q) => q.scenario === 'keeps-listing' && q.agent === 'coder');
    expect(coderSteps).toHaveLength(4);
    const bad = await runCli([...run, '--max-steps', '0'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-steps must be a whole number of at least 1/);
  });

  test('aca log tells the run as text: each step, tool call, test count and analysis, in order', async () => {
    const log = await runCli(['log', ids.succeeded!], env);
    expect(log.code).toBe(0);
    const lines = log.stdout.split('\n');
    const at = (pattern: RegExp): number => {
      const index = lines.findIndex((line) => pattern.test(line));
      expect({ pattern: String(pattern), found: index >= 0 }).toEqual({
        pattern: String(pattern),
        found: true,
      });
      return index;
    };
    const order = [
      at(/prepare workspace: done$/),
      at(/planner · recall similar failures, open the turn: done$/),
      at(/planner · model step 1: asks for list_files \. \(\d+\+\d+ tokens, \$0\.\d{4}\)$/),
      at(/planner · list_files \.: ok$/),
      at(/planner · model step 2: plan: /),
      at(/coder · create_file fizzbuzz\.py: ok$/),
      at(/git · commit coder turn of attempt 1: commit [0-9a-f]{12}$/),
      at(/tester · create_file tests\/test_fizzbuzz\.py: ok$/),
      at(/git · commit tester turn of attempt 1: commit [0-9a-f]{12}$/),
      at(/tester · run tests \(attempt 1\): 4 passed, 1 failed, 0 errors$/),
      at(/reflector · model step 2: analysis: root cause: fizzbuzz checks n % 3 before n % 15/),
      at(/tester · run tests \(attempt 2\): 5 passed, 0 failed, 0 errors/),
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(log.stdout).toMatch(/^moves: INIT → PLANNING, PLANNING → CODING, .* TESTING → SUCCESS$/m);
    expect(log.stdout).toMatch(/^state: SUCCESS, iteration 2\/15/m);
    expect(log.stdout).toMatch(
      /^cost: \$0\.\d{4} \(planner \$0\.\d{4}, coder \$0\.\d{4}, tester \$0\.\d{4}, reflector \$0\.\d{4}\)$/m,
    );
    const unknown = await runCli(['log', 'no-such-run'], env);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([2, 'aca: unknown run id "no-such-run"']);
  });

  test('aca list: newest first, and --state filters on the AgentState search attribute', async () => {
    const mine = [ids.succeeded!, ids.failed!];
    type Row = { workflowId: string; state: string; startTime: string };
    let rows: Row[] = [];
    await until(
      async () => {
        rows = JSON.parse((await runCli(['list', '--json'], env)).stdout) as Row[];
        return mine.every((id) => rows.some((r) => r.workflowId === id));
      },
      30_000,
      'both runs in the list',
    );
    const starts = rows.map((r) => r.startTime);
    expect([...starts].sort().reverse()).toEqual(starts);
    // The failing run was started after the succeeding one.
    expect(rows.findIndex((r) => r.workflowId === ids.failed)).toBeLessThan(
      rows.findIndex((r) => r.workflowId === ids.succeeded),
    );
    let failedOnly: Row[] = [];
    await until(
      async () => {
        failedOnly = JSON.parse((await runCli(['list', '--state', 'FAILED', '--json'], env)).stdout) as Row[];
        return failedOnly.some((r) => r.workflowId === ids.failed);
      },
      30_000,
      'the FAILED run under --state FAILED',
    );
    expect(failedOnly.every((r) => r.state === 'FAILED')).toBe(true);
    expect(failedOnly.some((r) => r.workflowId === ids.succeeded)).toBe(false);
  });

  test('--tests DIR: the acceptance tests are copied read-only and counted in the pass rate', async () => {
    const testsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-acceptance-'));
    const acceptance = [
      'from fizzbuzz import fizzbuzz',
      '',
      '',
      'def test_fifteen_is_fizzbuzz():',
      '    assert fizzbuzz(15) == "FizzBuzz"',
      '',
      '',
      'def test_seven_is_itself():',
      '    assert fizzbuzz(7) == "7"',
      '',
    ].join('\n');
    fs.writeFileSync(path.join(testsDir, 'test_acceptance.py'), acceptance);
    const id = newId('tests');
    const r = await runCli(fizzbuzzRun(id, '--tests', testsDir, '--json'), env);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as RunResult;
    const copy = path.join(result.workspace, 'test_acceptance.py');
    expect(fs.readFileSync(copy, 'utf8')).toBe(acceptance);
    expect(fs.statSync(copy).mode & 0o222).toBe(0);
    expect(result.files).toContain('test_acceptance.py');
    // The scenario's own tests plus the two acceptance tests, all in the last run.
    const withoutAcceptance = JSON.parse(
      (await runCli(['result', ids.succeeded!, '--json'], env)).stdout,
    ) as RunResult;
    expect(result.tests.passed).toBe(withoutAcceptance.tests.passed + 2);
  });

  test('aca memory search with an unreachable DATABASE_URL exits 3', async () => {
    const dead = `postgres://postgres@127.0.0.1:${await getFreePort()}/test`;
    const r = await runCli(['memory', 'search', 'fizzbuzz'], { ...env, DATABASE_URL: dead });
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
