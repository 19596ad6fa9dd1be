/**
 * The floor the overhead bench's ratio sits on: a workflow that only calls empty activities in
 * sequence, as many as a demo run calls, on this stack's server with a worker of its own. Each
 * call costs a workflow task and an activity dispatch through the server, whatever the activity
 * does; nothing a run's own code does can go below that.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { quietLogger, type BenchStack } from './bench-stack';
import { fetchExecutions, timeBreakdown } from './history-analysis';
import { median, round } from './bench-util';

export interface RoundTrips {
  /** Activities per workflow (the demo run's count). */
  activities: number;
  /** Median over repetitions: wall time from start to result, per activity (ms). */
  perActivityMs: number;
  /** Median over repetitions: workflow task started to completed, per task (ms). */
  workflowTaskMs: number;
  repetitions: number;
}

export async function measureRoundTrips(
  stack: BenchStack,
  activities: number,
  repetitions = 3,
): Promise<RoundTrips> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, 'round-trip-workflow.ts'),
    logger: quietLogger,
  });
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  const perActivity: number[] = [];
  const perTask: number[] = [];
  try {
    for (let rep = 0; rep < repetitions; rep++) {
      // A queue and worker of its own for each repetition, as each demo run's steps start fresh.
      const taskQueue = `bench-round-trips-${randomBytes(4).toString('hex')}`;
      const worker = await Worker.create({
        connection,
        namespace: stack.config.namespace,
        taskQueue,
        workflowBundle: { code },
        activities: { nothing: () => Promise.resolve() },
      });
      await worker.runUntil(async () => {
        const started = performance.now();
        const handle = await stack.client.workflow.start('roundTripsWorkflow', {
          taskQueue,
          workflowId: taskQueue,
          args: [activities],
        });
        await handle.result();
        perActivity.push((performance.now() - started) / activities);
        const times = timeBreakdown(
          await fetchExecutions(stack.client, handle.workflowId, handle.firstExecutionRunId),
        );
        perTask.push((times.workflowTaskMs - times.workflowTaskQueueMs) / times.workflowTasks);
      });
    }
  } finally {
    await connection.close();
  }
  return {
    activities,
    perActivityMs: round(median(perActivity), 1),
    workflowTaskMs: round(median(perTask), 1),
    repetitions,
  };
}
