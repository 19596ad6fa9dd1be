import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarios, type Scenario } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');

/** fault-401 with the other statuses that mean "this request will never succeed". */
function rejectedRequestScenarios(): Scenario[] {
  const base = loadScenarios(TEST_SCENARIOS).find((s) => s.name === 'fault-401')!;
  const messages: Record<number, string> = {
    403: 'You are not allowed to use this model',
    404: 'The model does not exist',
    422: 'Unprocessable request',
  };
  return Object.entries(messages).map(([status, message]) => {
    const scenario = structuredClone(base);
    scenario.name = `fault-${status}`;
    scenario.task = base.task!.replace('fault-401', scenario.name);
    if (scenario.match) scenario.match = scenario.match.replace('fault-401', scenario.name);
    const first = scenario.agents.planner![0][0];
    first.fault = { ...first.fault!, status: Number(status), message };
    return scenario;
  });
}

/** Dollars per million tokens of the scripted demo model, as a user's ACA_PRICES file gives them. */
const DEMO_PRICE = { input: 100, cached_input: 50, output: 400 };

describe('model faults injected by the scripted server', () => {
  let h: Harness;

  beforeAll(async () => {
    const prices = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aca-prices-')), 'prices.json');
    fs.writeFileSync(prices, JSON.stringify({ 'scripted:demo-fizzbuzz': DEMO_PRICE }));
    h = await createHarness({
      scenarios: [...loadScenarios(), ...loadScenarios(TEST_SCENARIOS), ...rejectedRequestScenarios()],
      env: { ACA_PRICES: prices },
    });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
  });

  const requestsOf = (scenario: string) => h.llm.requests.filter((r) => r.scenario === scenario);

  test('429 with Retry-After is retried after the time the server asked for', async () => {
    const result = await h.result(await h.start('fault-429'));
    expect(result.state).toBe('SUCCESS');
    const planner = requestsOf('fault-429').filter((r) => r.agent === 'planner');
    expect(planner.map((r) => r.status)).toEqual([429, 429, 200]);
    // The server asks for 3 s; the retry policy alone would wait 1 s, then 2 s.
    for (let i = 1; i < planner.length; i++) {
      expect(Date.parse(planner[i].at) - Date.parse(planner[i - 1].at)).toBeGreaterThanOrEqual(2950);
    }
  });

  test('500s and a dropped connection are retried with backoff', async () => {
    const [five, drop] = await Promise.all([h.start('fault-500'), h.start('fault-drop')]);
    expect((await h.result(five)).state).toBe('SUCCESS');
    expect((await h.result(drop)).state).toBe('SUCCESS');
    expect(
      requestsOf('fault-500')
        .filter((r) => r.agent === 'coder' && r.step === 0)
        .map((r) => r.status),
    ).toEqual([500, 500, 200]);
    expect(
      requestsOf('fault-drop')
        .filter((r) => r.agent === 'coder' && r.step === 0)
        .map((r) => r.status),
    ).toEqual(['dropped', 200]);
  });

  test('an answer slower than the model timeout is abandoned and retried', async () => {
    const started = Date.now();
    const result = await h.result(await h.start('fault-slow', { modelTimeoutMs: 3000 }));
    expect(result.state).toBe('SUCCESS');
    const coderFirst = requestsOf('fault-slow').filter((r) => r.agent === 'coder' && r.step === 0);
    expect(coderFirst).toHaveLength(2);
    expect(coderFirst[0].status).toBe('dropped');
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  test.each([
    ['fault-401', /401.*Incorrect API key/],
    ['fault-400', /400.*Invalid tools schema/],
    ['fault-403', /403.*not allowed to use this model/],
    ['fault-404', /404.*model does not exist/],
    ['fault-422', /422.*Unprocessable/],
  ])('%s ends the run FAILED with reason error at once', async (scenario, message) => {
    const started = Date.now();
    const handle = await h.start(scenario);
    const result = await h.result(handle);
    if (scenario === 'fault-401') await h.recordHistory(handle, 'error-401');
    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(message);
    // One request, no retry loop.
    expect(requestsOf(scenario)).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  test('invalid tool calls are answered with ok:false, nothing leaves the workspace, the agent goes on', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'do not read');
    const id = `bad-tool-calls-${Date.now()}`;
    const workspace = path.join(h.home, 'workspaces', id);
    fs.mkdirSync(workspace, { recursive: true });
    fs.symlinkSync(outside, path.join(workspace, 'link'));
    try {
      const handle = await h.start('bad-tool-calls', { id });
      const result = await h.result(handle);
      expect(result.state).toBe('SUCCESS');
      await h.recordHistory(handle, 'bad-tool-calls');
      const second = requestsOf('bad-tool-calls').find((r) => r.agent === 'coder' && r.step === 1)!;
      const answers = second.messages
        .filter((m) => m.role === 'tool')
        .map((m) => JSON.parse(String(m.content)));
      expect(answers).toHaveLength(8);
      for (const answer of answers) expect(answer.ok).toBe(false);
      expect(answers.map((a) => a.error)).toEqual([
        expect.stringMatching(/not valid JSON/),
        expect.stringMatching(/unknown tool "run_shell"/),
        expect.stringMatching(/content/),
        expect.stringMatching(/schema/),
        expect.stringMatching(/inside the workspace/),
        expect.stringMatching(/absolute/),
        expect.stringMatching(/symbolic link/),
        expect.stringMatching(/symbolic link/),
      ]);
      expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
      expect(fs.existsSync(path.join(h.home, 'workspaces', 'outside.py'))).toBe(false);
      expect(fs.existsSync('/tmp/aca-absolute-escape.py')).toBe(false);
      expect(JSON.stringify(second.messages)).not.toContain('do not read');
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  test('a model that never calls its finishing tool fails its turn after a bounded number of steps', async () => {
    const handle = await h.start('never-finishes', { maxIterations: 2, warnAt: 2 });
    const result = await h.result(handle);
    await h.recordHistory(handle, 'turn-error');
    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('max_iterations');
    expect(result.error).toMatch(/coder made no progress in 3 steps/);
    const coderCalls = requestsOf('never-finishes').filter((r) => r.agent === 'coder');
    expect(coderCalls).toHaveLength(2 * 3);
  });

  test('the token budget ends the run FAILED with reason budget', async () => {
    const handle = await h.start('demo-fizzbuzz', { maxTokens: 1500 });
    const result = await h.result(handle);
    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('budget');
    await h.recordHistory(handle, 'budget');
    expect(result.tokens.prompt + result.tokens.completion).toBeGreaterThan(1500);
    expect(result.error).toMatch(/token budget exceeded/);
  });

  test('the cost budget ends the run FAILED with reason budget, its cost what the served usage costs', async () => {
    const earlier = h.llm.requests.length;
    const handle = await h.start('demo-fizzbuzz', { maxCostUsd: 0.5 });
    const result = await h.result(handle);
    expect(result).toMatchObject({ state: 'FAILED', reason: 'budget' });
    expect(result.error).toMatch(/^cost budget exceeded: \$0\.\d{4} spent, the budget is \$0\.5$/);
    const served = h.llm.requests
      .slice(earlier)
      .filter((r) => r.scenario === 'demo-fizzbuzz' && r.status === 200);
    const usd = served.reduce(
      (sum, r) => sum + (r.usage!.prompt * DEMO_PRICE.input + r.usage!.completion * DEMO_PRICE.output) / 1e6,
      0,
    );
    expect(result.cost!.usd).toBeCloseTo(usd, 9);
    expect(result.cost!.usd).toBeGreaterThan(0.5);
    // The step before the last one was still within the budget: the run stopped at the first step over it.
    const last = served.at(-1)!;
    const before =
      usd - (last.usage!.prompt * DEMO_PRICE.input + last.usage!.completion * DEMO_PRICE.output) / 1e6;
    expect(before).toBeLessThanOrEqual(0.5);
    const byAgent = Object.values(result.cost!.byAgent).reduce((a, b) => a + b, 0);
    expect(byAgent).toBeCloseTo(result.cost!.usd, 9);
  });
});
