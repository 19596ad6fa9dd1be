import type { Client, WorkflowClient } from '@temporalio/client';

/** Either client: the service and the namespace are all that is asked of it. */
type AnyClient = {
  workflowService: (Client | WorkflowClient)['workflowService'];
  options: { namespace: string };
};

/** Temporal's enum values (TaskQueueKind NORMAL, TaskQueueType WORKFLOW), as the proto defines them. */
const TASK_QUEUE_KIND_NORMAL = 1;
const TASK_QUEUE_TYPE_WORKFLOW = 1;

/**
 * Temporal lists a poller for minutes after its last poll, and a live worker's long poll may
 * have started a minute ago; a poller not seen for longer than this is taken as gone.
 */
const POLLER_SEEN_WITHIN_MS = 90_000;

/** Whether some worker polls the task queue's workflow tasks, and which ones, by identity. */
export interface QueuePollers {
  taskQueue: string;
  identities: string[];
}

export async function workflowPollers(
  client: AnyClient,
  taskQueue: string,
  now = Date.now(),
): Promise<QueuePollers> {
  const response = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TASK_QUEUE_TYPE_WORKFLOW,
  });
  const identities = (response.pollers ?? [])
    .filter((p) => {
      const seconds = Number(p.lastAccessTime?.seconds ?? 0);
      return seconds === 0 || now - seconds * 1000 <= POLLER_SEEN_WITHIN_MS;
    })
    .map((p) => p.identity ?? 'unknown');
  return { taskQueue, identities };
}

/** The line that names an unpolled queue and the fix. */
export function noWorkerMessage(taskQueue: string): string {
  return `no worker is polling ${taskQueue}: start one with \`aca worker\` (with ACA_TASK_QUEUE=${taskQueue})`;
}

/**
 * Waits up to `withinMs` for a poller (a worker this process just started needs a moment);
 * null when one polls, else the message naming the queue. A server that cannot say is not
 * taken as "no worker": the caller goes on as before.
 */
export async function missingWorker(
  client: AnyClient,
  taskQueue: string,
  withinMs = 0,
): Promise<string | null> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    let pollers: QueuePollers;
    try {
      pollers = await workflowPollers(client, taskQueue);
    } catch {
      return null;
    }
    if (pollers.identities.length > 0) return null;
    if (Date.now() >= deadline) return noWorkerMessage(taskQueue);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
