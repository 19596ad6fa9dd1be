/**
 * The pytest verdict end to end with the scripted model: a Coder that forges passes by renaming
 * the acceptance items and emptying their runtest, or by an add whose result equals everything,
 * ends FAILED at its limit; a correct Coder whose
 * acceptance tests skip, expect failures and parametrize ends SUCCESS.
 */
import * as fs from 'node:fs';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { acceptanceTestsFolder, testScenario } from '../helpers/scenario-files';

const FORGER = testScenario('forges-node-ids');
const EQUAL_EVERYTHING = testScenario('forges-equal-everything');
const HONEST = testScenario('skips-honestly');

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
    const testsDir = acceptanceTestsFolder(FORGER);
    folders.push(testsDir);
    const result = await h.result(await h.start('forges-node-ids', { testsDir, maxIterations: 2 }));
    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('max_iterations');
    expect(result.passRate).toBe(0);
    expect(result.files).toEqual(expect.arrayContaining(['conftest.py', 'calc.py']));
  });

  test("a Coder whose add returns an object equal to everything, with the test module's isinstance shadowed, ends FAILED", async () => {
    const testsDir = acceptanceTestsFolder(EQUAL_EVERYTHING);
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
    const testsDir = acceptanceTestsFolder(HONEST);
    folders.push(testsDir);
    const result = await h.result(await h.start('skips-honestly', { testsDir, maxIterations: 2 }));
    expect(result.state).toBe('SUCCESS');
    expect(result.passRate).toBe(1);
    expect(result.iterations).toBe(1);
  });
});
