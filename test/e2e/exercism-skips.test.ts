/**
 * Exercism-style TypeScript exercises given as acceptance tests, most of their cases skipped the
 * way such exercises ship them (`xit`, `it.skip`, `it.todo`): a correct solution ends SUCCESS at
 * the first attempt, the skipped cases counted as skipped, neither tampering nor failures.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarioFile, type Scenario } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';

const SCENARIOS = ['ts-pythagorean-triplet', 'ts-crypto-square'].map((name) =>
  loadScenarioFile(path.resolve(__dirname, '..', 'scenarios', `${name}.json`)),
);

function writeTests(scenario: Scenario): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-exercism-tests-'));
  for (const [file, text] of Object.entries(scenario.acceptanceTests ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

describe('Exercism-style exercises with skipped tests', () => {
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
    const testsDir = writeTests(scenario);
    dirs.push(testsDir);
    const result = await h.result(await h.start(name, { testsDir, maxIterations: 2 }));
    expect(result.state).toBe('SUCCESS');
    expect(result.iterations).toBe(1);
    expect(result.tests).toEqual({ passed, failed: 0, errors: 0 });
    expect(result.passRate).toBe(1);
  });
});
