/**
 * TypeScript and JavaScript tasks end to end: the Tester's Jest suites run in the sandbox with
 * the project's own Jest, and the Reflector sees which tests failed and why.
 */
import * as path from 'node:path';
import { loadScenarios } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');

describe('TypeScript and JavaScript runs', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ scenarios: loadScenarios(TEST_SCENARIOS) });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a TypeScript task fails once under Jest, is reflected on, and succeeds at iteration 2', async () => {
    const handle = await h.start('ts-slugify');
    const result = await h.result(handle);
    expect(result.state).toBe('SUCCESS');
    expect(result.iterations).toBe(2);
    expect(result.tests).toEqual({ passed: 3, failed: 0, errors: 0 });
    expect(result.files.sort()).toEqual(['slugify.test.ts', 'slugify.ts']);

    const reflector = h.llm.requests.find((r) => r.scenario === 'ts-slugify' && r.agent === 'reflector');
    const prompt = JSON.stringify(reflector?.messages ?? []);
    expect(prompt).toContain('1 passed, 2 failed');
    expect(prompt).toMatch(/drops punctuation and repeated separators \(failed\)/);
    expect(prompt).toMatch(/strips accents \(failed\)/);
    expect(prompt).toContain('creme-brulee');
  });

  test('a JavaScript task written as ES modules passes at the first attempt', async () => {
    const result = await h.result(await h.start('js-word-count'));
    expect(result.state).toBe('SUCCESS');
    expect(result.iterations).toBe(1);
    expect(result.tests).toEqual({ passed: 2, failed: 0, errors: 0 });
    expect(result.passRate).toBe(1);
  });
});
