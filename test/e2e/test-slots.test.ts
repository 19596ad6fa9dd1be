/**
 * ACA_TEST_SLOTS caps how many sandboxed test runs one worker runs at once. Two runs whose test
 * takes 6 s start their tests together with two slots, and one after the other with one slot.
 * Each test writes a log file in its workspace as it starts, so the file times say when.
 */
import { readRunResult } from '../../src/shared/run-failure';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadScenarios } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness } from '../helpers/agent-harness';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');

async function testStartGapMs(slots: string): Promise<number> {
  const h = await createHarness({ scenarios: loadScenarios(TEST_SCENARIOS), env: { ACA_TEST_SLOTS: slots } });
  try {
    await h.startWorker();
    const handles = await Promise.all([h.start('slow-tests'), h.start('slow-tests')]);
    const results = (await Promise.all(handles.map((x) => readRunResult(x)))) as RunResult[];
    for (const r of results) expect(r.state).toBe('SUCCESS');
    const [a, b] = results.map((r) => fs.statSync(path.join(r.workspace, 'test-starts.log')).birthtimeMs);
    return Math.abs(a - b);
  } finally {
    await h.close();
  }
}

describe('ACA_TEST_SLOTS', () => {
  test('with one slot, the second test run waits for the first (its 6 s test)', async () => {
    expect(await testStartGapMs('1')).toBeGreaterThan(5_500);
  });

  test('with two slots, both test runs go at once (the control)', async () => {
    expect(await testStartGapMs('2')).toBeLessThan(3_000);
  });
});
