/**
 * Retryable versus permanent, for every family of activities a run calls: the retry policy the
 * workflow gives each family (activity-options.ts), pinned whole, and what the throwing side
 * turns its errors into, checked against that policy. A transient error made permanent (or the
 * reverse) on either side fails here.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import OpenAI from 'openai';
import { createMemoryActivities } from '../../src/activities/memory-activities';
import { asCommitFailure } from '../../src/activities/host-steps';
import { asStoreFailure } from '../../src/activities/store-failures';
import { toActivityFailure } from '../../src/llm/model-errors';
import type { FailureMemory } from '../../src/memory';
import { MemoryQueryError, MemoryUnavailableError } from '../../src/memory/memory-errors';
import { WorkTreeTooLargeError } from '../../src/repo/commit-size';
import { GitError } from '../../src/repo/git';
import {
  GitStoreMissingCommitError,
  GitStorePushRejectedError,
  GitStoreUnreachableError,
  WorkerDiskFullError,
} from '../../src/repo/git-store-errors';
import { DEFAULT_RUN_OPTIONS } from '../../src/shared/run-types';
import { DEFAULT_HOST_START_TIMEOUT_MS, hostActivities, runActivities } from '../../src/workflows/activity-options';
import { fake, resetWorkflowFake } from '../helpers/workflow-fake';

const backoff = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };
const queues = { disk: 'disk-1', host: 'host-1', tests: 'tests-1' };

function policies() {
  resetWorkflowFake({});
  runActivities({ ...DEFAULT_RUN_OPTIONS, modelTimeoutMs: 60_000 });
  const [agents, memoryWrites, reports, repository] = fake.proxies;
  resetWorkflowFake({});
  hostActivities(queues, undefined);
  const [files, ping, testing] = fake.proxies;
  return { agents, memoryWrites, reports, repository, files, ping, testing };
}

describe('the retry policy of each family of activities', () => {
  test('the shared queue: model calls, memory writes, reports, the repository', () => {
    const { agents, memoryWrites, reports, repository } = policies();
    expect([agents, memoryWrites, reports, repository]).toEqual([
      {
        startToCloseTimeout: 70_000,
        heartbeatTimeout: '20s',
        retry: { ...backoff, maximumAttempts: 8, nonRetryableErrorTypes: ['ModelRequestRejected'] },
      },
      {
        startToCloseTimeout: '30s',
        heartbeatTimeout: '8s',
        scheduleToCloseTimeout: '1h',
        retry: { ...backoff, nonRetryableErrorTypes: ['MemoryQueryError'] },
      },
      { startToCloseTimeout: '1m', retry: { ...backoff, maximumAttempts: 5 } },
      {
        startToCloseTimeout: '10m',
        heartbeatTimeout: '30s',
        retry: { ...backoff, maximumAttempts: 3, nonRetryableErrorTypes: ['BadRunInput'] },
      },
    ]);
  });

  test("the run's host: files, ping, tests; a start timeout only for a run that can move", () => {
    const { files, ping, testing } = policies();
    expect([files, ping, testing]).toEqual([
      {
        taskQueue: 'host-1',
        startToCloseTimeout: '5m',
        heartbeatTimeout: '20s',
        retry: {
          ...backoff,
          maximumAttempts: 5,
          nonRetryableErrorTypes: ['BadRunInput', 'WorkTreeTooLarge', 'GitStorePushRejected', 'GitStoreMissingCommit'],
        },
      },
      { taskQueue: 'host-1', startToCloseTimeout: '10s', retry: { maximumAttempts: 1 } },
      {
        taskQueue: 'tests-1',
        cancellationType: 'WAIT_CANCELLATION_COMPLETED',
        startToCloseTimeout: '15m',
        heartbeatTimeout: '30s',
        retry: { ...backoff, maximumAttempts: 3, nonRetryableErrorTypes: ['SandboxUnavailable'] },
      },
    ]);
    resetWorkflowFake({});
    hostActivities(queues, 5_000);
    expect(fake.proxies.map((p) => [p.taskQueue, p.scheduleToStartTimeout])).toEqual([
      ['host-1', 5_000],
      ['host-1', 5_000],
      ['tests-1', 5_000],
    ]);
    expect(DEFAULT_HOST_START_TIMEOUT_MS).toBe(60_000);
  });
});

/** Whether Temporal would retry this failure under this policy. */
function retried(failure: unknown, policy: Record<string, unknown> | undefined): boolean {
  expect(failure).toBeInstanceOf(ApplicationFailure);
  const f = failure as ApplicationFailure;
  const types = (policy?.retry as { nonRetryableErrorTypes?: string[] }).nonRetryableErrorTypes ?? [];
  return !f.nonRetryable && !types.includes(f.type ?? '');
}

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
      await new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') }).run(activities.rememberRun, {
        workflowId: 'wf-1',
        task: 't',
        language: 'python',
      });
    } catch (thrown) {
      return thrown;
    }
    throw new Error('rememberRun did not fail');
  }

  test.each([
    ['a database out of reach', new MemoryUnavailableError('down', 'ECONNREFUSED'), true, 'MemoryUnavailable'],
    ['a dropped connection (pg, by code)', Object.assign(new Error('reset'), { code: 'ECONNRESET' }), true, 'MemoryUnavailable'],
    ['a server restarting (SQLSTATE 57P01)', Object.assign(new Error('bye'), { code: '57P01' }), true, 'MemoryUnavailable'],
    ['a refused statement', new MemoryQueryError('bad row', '23505'), false, 'MemoryQueryError'],
    ['a constraint (SQLSTATE 23505)', Object.assign(new Error('dup'), { code: '23505' }), false, 'MemoryQueryError'],
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

describe("the git store's and the commit's errors", () => {
  test.each([
    [
      'a refused push',
      new GitStorePushRejectedError('store', 'aca/x', 'a1', 'b2', 'stale'),
      'GitStorePushRejected',
      false,
      { store: 'store', branch: 'aca/x', expected: 'a1', actual: 'b2' },
    ],
    [
      'a refused push, where the branch is unknown',
      new GitStorePushRejectedError('store', 'aca/x', null, undefined, 'stale'),
      'GitStorePushRejected',
      false,
      { store: 'store', branch: 'aca/x', expected: null, actual: null },
    ],
    [
      'a commit the store lacks',
      new GitStoreMissingCommitError('store', 'aca/x', 'c3'),
      'GitStoreMissingCommit',
      false,
      { store: 'store', branch: 'aca/x', commit: 'c3' },
    ],
    [
      'a store out of reach',
      new GitStoreUnreachableError('store', 'push', 'timed out'),
      'GitStoreUnreachable',
      true,
      { store: 'store', operation: 'push' },
    ],
    ['a full disk', new WorkerDiskFullError('/w', 'ENOSPC'), 'WorkerDiskFull', true, { where: '/w' }],
  ])('%s: %s, retried %s', (_what, err, type, retryable, details) => {
    const { files } = policies();
    for (const failure of [asStoreFailure(err), asCommitFailure(err)]) {
      expect(failure).toMatchObject({ type, message: err.message, nonRetryable: !retryable, details: [details] });
      expect(retried(failure, files)).toBe(retryable);
    }
  });

  test("git out of space on the worker's own disk is retried; other git errors pass through as they are", () => {
    const { files } = policies();
    const full = new GitError(['commit'], 128, 'fatal: No space left on device');
    const failure = asStoreFailure(full);
    expect(failure).toMatchObject({
      type: 'WorkerDiskFull',
      nonRetryable: false,
      message: `no space left on this worker's disk: ${full.message}`,
    });
    expect(retried(failure, files)).toBe(true);
    const other = new GitError(['commit'], 1, 'fatal: bad object');
    expect(asStoreFailure(other)).toBe(other);
    const plain = new Error('x');
    expect(asStoreFailure(plain)).toBe(plain);
  });

  test('a step too large to commit ends the run', () => {
    const { files } = policies();
    const err = new WorkTreeTooLargeError('big.bin', 200, 300, 2, { fileBytes: 100, totalBytes: 1000 });
    const failure = asCommitFailure(err);
    expect(failure).toMatchObject({
      type: 'WorkTreeTooLarge',
      nonRetryable: true,
      details: [{ path: 'big.bin', bytes: 200, totalBytes: 300 }],
    });
    expect(retried(failure, files)).toBe(false);
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
