import { Client, Connection } from '@temporalio/client';
import type { AcaConfig } from '../config';
import { isTemporalReachable } from '../temporal/dev-server';
import { noWorkerMessage, workflowPollers } from '../temporal/task-queue-pollers';
import type { CheckResult } from './check-result';

/**
 * Whether a worker polls the task queue runs are started on: without one a run starts and waits
 * forever. A warning, not a refusal: doctor is often run before the first worker is started.
 * Null when no server answers.
 */
export async function checkWorkers(config: AcaConfig): Promise<CheckResult | null> {
  const name = 'workers';
  // With no server, the temporal line already says what happens (aca starts a local stack).
  if (!(await isTemporalReachable(config.temporalAddress, 3000))) return null;
  let connection: Connection | null = null;
  try {
    connection = await Connection.connect({ ...config.temporalConnection, connectTimeout: '5s' });
    const client = new Client({ connection, namespace: config.namespace });
    const { identities } = await workflowPollers(client, config.taskQueue);
    if (identities.length === 0) {
      return { name, status: 'warn', detail: noWorkerMessage(config.taskQueue), fix: '`aca worker`' };
    }
    return {
      name,
      status: 'ok',
      detail: `${identities.length} polling ${config.taskQueue}: ${identities.slice(0, 3).join(', ')}${identities.length > 3 ? ', …' : ''}`,
    };
  } catch (err) {
    return {
      name,
      status: 'warn',
      detail: `could not ask Temporal for ${config.taskQueue}'s pollers: ${(err as Error).message}`,
    };
  } finally {
    await connection?.close();
  }
}
