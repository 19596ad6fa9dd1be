import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RunOptions } from '../shared/run-types';

const defaultRetry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const;

/** The activities a run calls, each group with the timeouts and retries its work needs. */
export function runActivities(options: RunOptions) {
  return {
    /** Model calls: long, heartbeating, retried through rate limits and outages. */
    agents: proxyActivities<Activities>({
      startToCloseTimeout: options.modelTimeoutMs + 10_000,
      heartbeatTimeout: '20s',
      retry: { ...defaultRetry, maximumAttempts: 8, nonRetryableErrorTypes: ['ModelRequestRejected'] },
    }),
    /**
     * Workspace and conversation-store steps take milliseconds on the worker that runs the
     * workflow. As local activities they are still retried and recorded, but skip the round trip
     * through the server's task queue (~45 ms each on a dev server).
     */
    workspace: proxyLocalActivities<Activities>({
      startToCloseTimeout: '1m',
      retry: { ...defaultRetry, maximumAttempts: 5, nonRetryableErrorTypes: ['BadRunInput'] },
    }),
    /**
     * Failure memory writes must not be lost to an outage nor hold up the agents: they run in the
     * background, in order, retrying for up to an hour (see MemoryQueue).
     */
    memoryWrites: proxyActivities<Activities>({
      startToCloseTimeout: '30s',
      heartbeatTimeout: '8s',
      scheduleToCloseTimeout: '1h',
      retry: {
        initialInterval: '1s',
        backoffCoefficient: 2,
        maximumInterval: '30s',
        nonRetryableErrorTypes: ['MemoryQueryError'],
      },
    }),
    /** Making the run's worktree or repository and deciding its test command: seconds on a large repository. */
    repository: proxyActivities<Activities>({
      startToCloseTimeout: '10m',
      heartbeatTimeout: '30s',
      retry: { ...defaultRetry, maximumAttempts: 3, nonRetryableErrorTypes: ['BadRunInput'] },
    }),
    /**
     * A cancelled test run is waited for: until its sandbox is gone, nothing may walk the
     * workspace its processes could still be changing (see workspace-ownership.ts).
     */
    testing: proxyActivities<Activities>({
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      startToCloseTimeout: '15m',
      heartbeatTimeout: '30s',
      retry: { ...defaultRetry, maximumAttempts: 3, nonRetryableErrorTypes: ['SandboxUnavailable'] },
    }),
  };
}

export type RunActivities = ReturnType<typeof runActivities>;
