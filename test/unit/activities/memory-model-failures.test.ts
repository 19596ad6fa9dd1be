/**
 * Failure memory's and the model's errors as the activities throw them, checked against the retry
 * policy the workflow gives their families: a transient error made permanent fails here.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../../helpers/workflow-fake'));

import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import OpenAI from 'openai';
import { createMemoryActivities } from '../../../src/activities/memory-activities';
import { toActivityFailure } from '../../../src/llm/model-errors';
import type { FailureMemory } from '../../../src/memory';
import { MemoryQueryError, MemoryUnavailableError } from '../../../src/memory/memory-errors';
import { policies, retried } from '../../helpers/activity-policies';

describe('failure memory writes', () => {
  const memoryThrowing = (err: unknown) =>
    createMemoryActivities({
      reports: { loadReport: async () => null } as never,
      memory: async () =>
        ({
          createTask: () => Promise.reject(err),
        }) as unknown as FailureMemory,
    });

  async function failureOf(err: unknown, opening = false): Promise<unknown> {
    const activities = opening
      ? createMemoryActivities({ reports: {} as never, memory: () => Promise.reject(err) })
      : memoryThrowing(err);
    try {
      await new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') }).run(
        activities.rememberRun,
        {
          workflowId: 'wf-1',
          task: 't',
          language: 'python' as const,
        },
      );
    } catch (thrown) {
      return thrown;
    }
    throw new Error('rememberRun did not fail');
  }

  test.each([
    [
      'a database out of reach',
      new MemoryUnavailableError('down', 'ECONNREFUSED'),
      true,
      'MemoryUnavailable',
    ],
    [
      'a dropped connection (pg, by code)',
      Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      true,
      'MemoryUnavailable',
    ],
    [
      'a server restarting (SQLSTATE 57P01)',
      Object.assign(new Error('bye'), { code: '57P01' }),
      true,
      'MemoryUnavailable',
    ],
    ['a refused statement', new MemoryQueryError('bad row', '23505'), false, 'MemoryQueryError'],
    [
      'a constraint (SQLSTATE 23505)',
      Object.assign(new Error('dup'), { code: '23505' }),
      false,
      'MemoryQueryError',
    ],
  ])('%s: retried %s, as %s', async (_what, err, retryable, type) => {
    const { memoryWrites } = policies();
    for (const opening of [false, true]) {
      const failure = await failureOf(err, opening);
      expect(failure).toMatchObject({
        type,
        nonRetryable: !retryable,
        message: `failure memory: create task: ${(err as Error).message}`,
      });
      expect(retried(failure, memoryWrites)).toBe(retryable);
    }
  });
});

describe('model calls', () => {
  const apiError = (status: number) =>
    OpenAI.APIError.generate(status, { error: { message: 'no' } }, undefined, new Headers());

  test.each([
    [401, 'ModelRequestRejected', false],
    [400, 'ModelRequestRejected', false],
    [429, 'ModelRateLimited', true],
    [500, 'ModelServerError', true],
    [503, 'ModelServerError', true],
  ])('an answer %s: %s, retried %s', (status, type, retryable) => {
    const { agents } = policies();
    const failure = toActivityFailure(apiError(status));
    expect(failure).toMatchObject({ type });
    expect(retried(failure, agents)).toBe(retryable);
  });
});
