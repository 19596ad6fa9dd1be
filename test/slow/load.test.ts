/**
 * 100 concurrent runs of mixed scenarios, model faults among them, on one worker (ACA_LOAD_RUNS
 * sets how many). Minutes long; in `npm test`, test/e2e/many-hosts.test.ts runs 20 mixed runs at
 * once (faults among them) across two workers, test/faults/model-faults.test.ts each fault
 * scenario of the mix (500, a dropped connection, 429, 401, bad tool calls), and
 * test/e2e/agent-run.test.ts the demo and never-passing runs.
 */
import { readRunResult } from '../../src/shared/run-failure';
import * as path from 'node:path';
import { loadScenarios } from '../../src/llm/scenario';
import type { RunOptions, RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');
const RUNS = Number(process.env.ACA_LOAD_RUNS ?? 100);

/** Each scenario in the mix, with the end state it must reach. */
const MIX: Array<{ scenario: string; options?: Partial<RunOptions>; state: string; reason: string | null }> =
  [
    { scenario: 'quick-pass', state: 'SUCCESS', reason: null },
    { scenario: 'demo-fizzbuzz', state: 'SUCCESS', reason: null },
    { scenario: 'fault-500', state: 'SUCCESS', reason: null },
    { scenario: 'fault-drop', state: 'SUCCESS', reason: null },
    { scenario: 'fault-429', state: 'SUCCESS', reason: null },
    { scenario: 'bad-tool-calls', state: 'SUCCESS', reason: null },
    { scenario: 'fault-401', state: 'FAILED', reason: 'error' },
    {
      scenario: 'never-passes',
      options: { maxIterations: 2, warnAt: 2 },
      state: 'FAILED',
      reason: 'max_iterations',
    },
  ];

describe(`load: ${RUNS} concurrent runs of mixed scenarios with faults on one worker`, () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness({ scenarios: [...loadScenarios(), ...loadScenarios(TEST_SCENARIOS)] });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
  });

  test(
    'every run reaches its correct end state and none is stuck',
    async () => {
      const started = Date.now();
      const runs = await Promise.all(
        Array.from({ length: RUNS }, async (_, i) => {
          const spec = MIX[i % MIX.length];
          const handle = await h.start(spec.scenario, {
            ...spec.options,
            id: `load-${started}-${i}-${spec.scenario}`,
          });
          return { spec, handle };
        }),
      );
      const outcomes = await Promise.all(
        runs.map(async ({ spec, handle }) => {
          const result = await Promise.race([
            readRunResult(handle) as Promise<RunResult>,
            new Promise<null>((resolve) => setTimeout(() => resolve(null), 20 * 60_000)),
          ]);
          return { spec, result };
        }),
      );
      const wallMs = Date.now() - started;

      const summary = new Map<string, number>();
      const wrong: string[] = [];
      for (const { spec, result } of outcomes) {
        const key = result
          ? `${spec.scenario} -> ${result.state}${result.reason ? ` (${result.reason})` : ''}`
          : `${spec.scenario} -> STUCK`;
        summary.set(key, (summary.get(key) ?? 0) + 1);
        if (!result || result.state !== spec.state || result.reason !== spec.reason) wrong.push(key);
      }
      const lines = [...summary].sort().map(([k, n]) => `  ${String(n).padStart(3)}  ${k}`);
      console.log(
        `load test: ${RUNS} runs in ${(wallMs / 1000).toFixed(1)} s (${((RUNS / wallMs) * 60_000).toFixed(1)} runs/min), ${h.llm.requests.length} model requests\n${lines.join('\n')}`,
      );
      expect(wrong).toEqual([]);
    },
    25 * 60_000,
  );
});
