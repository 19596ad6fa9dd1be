/**
 * The validators of the run's updates (src/workflows/run-messages.ts) on requests a client built
 * wrongly: each is refused with the message a user reads, never a TypeError from inside the
 * workflow, and the run still takes the next good request.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import type { RunResult } from '../../src/shared/run-types';
import { codingAgentWorkflow } from '../../src/workflows/coding-agent';
import { eventually, failingTests, fakeRunInput, setUpFakeRun } from '../helpers/fake-run';
import { runOutcome } from '../helpers/fake-run';
import { query, update } from '../helpers/workflow-fake';

describe('an extend without its request', () => {
  test('no request, null or a request without iterations is refused with the range, and the wait goes on', async () => {
    setUpFakeRun({ tests: (attempt) => (attempt === 1 ? failingTests : {}) });
    const result = runOutcome(codingAgentWorkflow(fakeRunInput({ maxIterations: 1, onLimit: 'ask' })));
    await eventually(
      'the wait at the limit',
      () => (query('state') as { waiting: string }).waiting === 'limit',
    );
    for (const request of [undefined, null, {}, { feedback: 'more' }]) {
      expect(() => update('extend', request)).toThrow(
        new Error('iterations must be a whole number from 1 to 1000'),
      );
    }
    expect((query('state') as { waiting: string }).waiting).toBe('limit');
    expect(update('extend', { iterations: 2 })).toEqual({ maxIterations: 3 });
    expect(await result).toMatchObject<Partial<RunResult>>({
      state: 'SUCCESS',
      iterations: 2,
      maxIterations: 3,
    });
  });
});
