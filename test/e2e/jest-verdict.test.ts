/**
 * The Jest acceptance verdict end to end. Exercism-style TypeScript exercises given as acceptance
 * tests, most of their cases skipped the way such exercises ship them (`xit`, `it.skip`,
 * `it.todo`): a correct solution ends SUCCESS at the first attempt, the skipped cases counted as
 * skipped, neither tampering nor failures. A Coder that forges the verdict from its solution module
 * instead ends FAILED.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadScenarioFile } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { acceptanceTestsFolder } from '../helpers/scenario-files';

const SCENARIOS = ['ts-pythagorean-triplet', 'ts-crypto-square', 'ts-forges-passes'].map((name) =>
  loadScenarioFile(path.resolve(__dirname, '..', 'scenarios', `${name}.json`)),
);

describe('the Jest acceptance verdict end to end', () => {
  let h: Harness;
  const dirs: string[] = [];

  beforeAll(async () => {
    h = await createHarness({ scenarios: SCENARIOS });
    await h.startWorker();
  });

  afterAll(async () => {
    await h?.close();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  test.each([
    ['ts-pythagorean-triplet', 2],
    ['ts-crypto-square', 3],
  ])('%s ends SUCCESS at the first attempt, its skipped tests counted as skipped', async (name, passed) => {
    const scenario = SCENARIOS.find((s) => s.name === name)!;
    const testsDir = acceptanceTestsFolder(scenario);
    dirs.push(testsDir);
    const result = await h.result(await h.start(name, { testsDir, maxIterations: 2 }));
    expect(result.state).toBe('SUCCESS');
    expect(result.iterations).toBe(1);
    expect(result.tests).toEqual({ passed, failed: 0, errors: 0 });
    expect(result.passRate).toBe(1);
  });

  test('a Coder that forges the verdict from its solution module ends FAILED at its limit', async () => {
    const scenario = SCENARIOS.find((s) => s.name === 'ts-forges-passes')!;
    const testsDir = acceptanceTestsFolder(scenario);
    dirs.push(testsDir);
    const result = await h.result(await h.start('ts-forges-passes', { testsDir, maxIterations: 2 }));
    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('max_iterations');
    expect(result.passRate).toBe(0);
    const reflector = h.llm.requests.find(
      (r) => r.scenario === 'ts-forges-passes' && r.agent === 'reflector',
    );
    // The forgery swallows the TypeErrors of its assignments: the acceptance tests then run on the
    // real Object.is and it, and fail on their merits.
    const prompt = JSON.stringify(reflector?.messages ?? []);
    expect(prompt).toContain('calc.test.ts::add adds (failed)');
    expect(prompt).toContain('Received: -1');
  });
});
