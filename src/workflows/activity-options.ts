import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { McpActivities } from '../activities/mcp-activities';
import type { HostQueues } from '../shared/host-queues';
import type { RunOptions } from '../shared/run-types';
import { FAILURE_TYPES } from '../shared/failure-types';

const defaultRetry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const;

/** How long a step of the run's host may wait to start, by default, before the run moves. */
export const DEFAULT_HOST_START_TIMEOUT_MS = 60_000;

/**
 * The activities of the shared queue a run calls, each group with the timeouts and retries its
 * work needs. `heartbeatTimeoutMs`: the one heartbeat timeout of all the run's heartbeating steps,
 * as the preparing host's ACA_HEARTBEAT_TIMEOUT says; absent, each group has its own.
 */
export function runActivities(options: RunOptions, heartbeatTimeoutMs?: number) {
  return {
    /** Model calls: long, heartbeating, retried through rate limits and outages. */
    agents: proxyActivities<Activities>({
      startToCloseTimeout: options.modelTimeoutMs + 10_000,
      heartbeatTimeout: heartbeatTimeoutMs ?? '20s',
      retry: {
        ...defaultRetry,
        maximumAttempts: 8,
        nonRetryableErrorTypes: [FAILURE_TYPES.modelRequestRejected],
      },
    }),
    /**
     * Failure memory writes must not be lost to an outage nor hold up the agents: they run in the
     * background, in order, retrying for up to an hour (see MemoryQueue).
     */
    memoryWrites: proxyActivities<Activities>({
      startToCloseTimeout: '30s',
      heartbeatTimeout: heartbeatTimeoutMs ?? '8s',
      scheduleToCloseTimeout: '1h',
      retry: {
        initialInterval: '1s',
        backoffCoefficient: 2,
        maximumInterval: '30s',
        nonRetryableErrorTypes: [FAILURE_TYPES.memoryQueryError],
      },
    }),
    /** Reading a stored report (the baseline's, for the plan's targets). */
    reports: proxyActivities<Activities>({
      startToCloseTimeout: '1m',
      retry: { ...defaultRetry, maximumAttempts: 5 },
    }),
    /**
     * Making the run's worktree or repository and deciding its test command, or adopting a run
     * from the git store: seconds, minutes on a large repository. The worker that takes the step
     * becomes the run's host.
     */
    repository: proxyActivities<Activities>({
      startToCloseTimeout: '10m',
      heartbeatTimeout: heartbeatTimeoutMs ?? '30s',
      retry: { ...defaultRetry, maximumAttempts: 3, nonRetryableErrorTypes: [FAILURE_TYPES.badRunInput] },
    }),
  };
}

/**
 * The activities of a run's host. `startTimeoutMs` (only for a run that can move): a step not
 * started by then fails with a schedule-to-start timeout, and the workflow moves the run.
 * `heartbeatTimeoutMs`: as for runActivities.
 */
export function hostActivities(
  queues: HostQueues,
  startTimeoutMs: number | undefined,
  heartbeatTimeoutMs?: number,
) {
  const toStart = startTimeoutMs === undefined ? {} : { scheduleToStartTimeout: startTimeoutMs };
  return {
    /**
     * File tools, commits, turn openings, listings: milliseconds on the host's own disk, seconds
     * when a push to the git store is slow. They heartbeat, so a dead host's step is retried soon.
     */
    files: proxyActivities<Activities>({
      taskQueue: queues.host,
      ...toStart,
      startToCloseTimeout: '5m',
      heartbeatTimeout: heartbeatTimeoutMs ?? '20s',
      retry: {
        ...defaultRetry,
        maximumAttempts: 5,
        nonRetryableErrorTypes: [
          FAILURE_TYPES.badRunInput,
          FAILURE_TYPES.workTreeTooLarge,
          FAILURE_TYPES.gitStorePushRejected,
          FAILURE_TYPES.gitStoreMissingCommit,
        ],
      },
    }),
    /** Answers at once on a live host: a test queue that is only busy is told from a dead host. */
    ping: proxyActivities<Activities>({
      taskQueue: queues.host,
      ...toStart,
      startToCloseTimeout: '10s',
      retry: { maximumAttempts: 1 },
    }),
    /**
     * Test runs, on the host's test queue, whose slots are the runs the host takes at once. A
     * cancelled test run is waited for: until its sandbox is gone, nothing may walk the workspace
     * its processes could still be changing (see workspace-ownership.ts).
     */
    testing: proxyActivities<Activities>({
      taskQueue: queues.tests,
      ...toStart,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      startToCloseTimeout: '15m',
      heartbeatTimeout: heartbeatTimeoutMs ?? '30s',
      retry: {
        ...defaultRetry,
        maximumAttempts: 3,
        nonRetryableErrorTypes: [FAILURE_TYPES.sandboxUnavailable],
      },
    }),
  };
}

/** MCP tool calls, on the queue of the workers that have the server; a server that died is restarted. */
export function mcpActivities(taskQueue: string) {
  return proxyActivities<McpActivities>({
    taskQueue,
    scheduleToStartTimeout: '5m',
    startToCloseTimeout: '5m',
    heartbeatTimeout: '30s',
    retry: { ...defaultRetry, maximumAttempts: 4 },
  });
}

export type RunActivities = ReturnType<typeof runActivities>;
export type HostActivities = ReturnType<typeof hostActivities>;
