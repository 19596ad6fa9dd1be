/** The retry policy of each family of activities, as the workflow code asks for them (through the workflow fake). */
import { ApplicationFailure } from '@temporalio/common';
import { DEFAULT_RUN_OPTIONS } from '../../src/shared/run-types';
import { hostActivities, runActivities } from '../../src/workflows/activity-options';
import { fake, resetWorkflowFake } from './workflow-fake';

export const backoff = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };
export const queues = { disk: 'disk-1', host: 'host-1', tests: 'tests-1' };

export function policies(heartbeatTimeoutMs?: number) {
  resetWorkflowFake({});
  runActivities({ ...DEFAULT_RUN_OPTIONS, modelTimeoutMs: 60_000 }, heartbeatTimeoutMs);
  const [agents, memoryWrites, reports, repository] = fake.proxies;
  resetWorkflowFake({});
  hostActivities(queues, undefined, heartbeatTimeoutMs);
  const [files, ping, testing] = fake.proxies;
  return { agents, memoryWrites, reports, repository, files, ping, testing };
}

/** Whether Temporal would retry this failure under this policy. */
export function retried(failure: unknown, policy: Record<string, unknown> | undefined): boolean {
  expect(failure).toBeInstanceOf(ApplicationFailure);
  const f = failure as ApplicationFailure;
  const types = (policy?.retry as { nonRetryableErrorTypes?: string[] }).nonRetryableErrorTypes ?? [];
  return !f.nonRetryable && !types.includes(f.type ?? '');
}
