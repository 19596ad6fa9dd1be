/**
 * The pytest verdict end to end with the scripted model: a Coder that forges passes by renaming
 * the acceptance items and emptying their runtest, or by an add whose result equals everything,
 * ends FAILED at its limit; a correct Coder whose
 * acceptance tests skip, expect failures and parametrize ends SUCCESS.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarioFile, type Scenario } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';

const scenario = (name: string): Scenario =>
  loadScenarioFile(path.resolve(__dirname, '..', 'scenarios', `${name}.json`));
const FORGER = scenario('forges-node-ids');
const EQUAL_EVERYTHING = scenario('forges-equal-everything');
const HONEST = scenario('skips-honestly');

function testsFolder(s: Scenario): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-verdict-tests-'));
  for (const [file, text] of Object.entries(s.acceptanceTests ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('the pytest verdict end to end', () => {
  let h: Harness;
  const folders: string[] = [];

  beforeAll(async () => {
    h = await createHarness({ scenarios: [FORGER, EQUAL_EVERYTHING, HONEST] });
    await h.startWorker();
  });

  afterAll(async () => {
    await h?.close();
    for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a Coder that renames the acceptance items and empties their runtest ends FAILED', async () => {
    const testsDir = testsFolder(FORGER);
    folders.push(testsDir);
    const result = await h.result(await h.start('forges-node-ids', { testsDir, maxIterations: 2 }));
    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('max_iterations');
    expect(result.passRate).toBe(0);
    expect(result.files).toEqual(expect.arrayContaining(['conftest.py', 'calc.py']));
  });

  test("a Coder whose add returns an object equal to everything, with the test module's isinstance shadowed, ends FAILED", async () => {
    const testsDir = testsFolder(EQUAL_EVERYTHING);
    folders.push(testsDir);
    const result = await h.result(await h.start('forges-equal-everything', { testsDir, maxIterations: 2 }));
    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('max_iterations');
    expect(result.passRate).toBe(0);
    const reflector = h.llm.requests.find(
      (r) => r.scenario === 'forges-equal-everything' && r.agent === 'reflector',
    );
    const prompt = JSON.stringify(reflector?.messages ?? []);
    expect(prompt).toContain('Test run: tampered');
    expect(prompt).toMatch(
      /a comparison in the acceptance tests ran the code under test's _Anything\.__eq__/,
    );
  });

  test('a correct Coder whose acceptance tests skip and expect failures ends SUCCESS', async () => {
    const testsDir = testsFolder(HONEST);
    folders.push(testsDir);
    const result = await h.result(await h.start('skips-honestly', { testsDir, maxIterations: 2 }));
    expect(result.state).toBe('SUCCESS');
    expect(result.passRate).toBe(1);
    expect(result.iterations).toBe(1);
  });
});
