/**
 * Retryable versus permanent, for every family of activities a run calls: the retry policy the
 * workflow gives each family (activity-options.ts), pinned whole, and what the throwing side
 * turns its errors into, checked against that policy. A transient error made permanent (or the
 * reverse) on either side fails here.
 */
jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'));

import { asCommitFailure } from '../../src/activities/host-steps';
import { asStoreFailure } from '../../src/activities/store-failures';
import {
  WorkTreeTooLargeError,
  GitError,
  GitStoreMissingCommitError,
  GitStorePushRejectedError,
  GitStoreUnreachableError,
  WorkerDiskFullError,
} from '../../src/repo';
import { DEFAULT_HOST_START_TIMEOUT_MS, hostActivities } from '../../src/workflows/activity-options';
import { backoff, policies, queues, retried } from '../helpers/activity-policies';
import { fake, resetWorkflowFake } from '../helpers/workflow-fake';

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
          nonRetryableErrorTypes: [
            'BadRunInput',
            'WorkTreeTooLarge',
            'GitStorePushRejected',
            'GitStoreMissingCommit',
          ],
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

  test("a heartbeat timeout of the run's replaces every group's own, and only where there is one", () => {
    const timeouts = Object.entries(policies(4_000)).map(([group, p]) => [group, p?.heartbeatTimeout]);
    expect(Object.fromEntries(timeouts)).toEqual({
      agents: 4_000,
      memoryWrites: 4_000,
      reports: undefined,
      repository: 4_000,
      files: 4_000,
      ping: undefined,
      testing: 4_000,
    });
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
      expect(failure).toMatchObject({
        type,
        message: err.message,
        nonRetryable: !retryable,
        details: [details],
      });
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
