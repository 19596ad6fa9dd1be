/**
 * A worker of your own that runs aca's workflow and activities next to your workflows. Settings
 * come from the environment as for `aca worker` (TEMPORAL_ADDRESS, ACA_TASK_QUEUE, ACA_HOME,
 * OPENAI_BASE_URL, …). The steps that need a run's files go to this host's own task queues, whose
 * workers createHostWorkers makes.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from 'aca-agent';
import { createAcaActivities, createHostWorkers, installRuntime, registerSearchAttributes } from 'aca-agent/worker';

async function main(): Promise<void> {
  const config = loadConfig();
  // Logging at ACA_LOG_LEVEL (and metrics at ACA_METRICS_PORT), as `aca worker` does.
  installRuntime(config);
  const connection = await NativeConnection.connect(config.temporalConnection);
  const { activities, close } = createAcaActivities(config);
  try {
    await registerSearchAttributes(connection, config.namespace);
    const worker = await Worker.create({
      connection,
      namespace: config.namespace,
      taskQueue: config.taskQueue,
      workflowsPath: require.resolve('./workflows'),
      activities,
    });
    const hostWorkers = await createHostWorkers({ connection, config, activities });
    const all = [worker, ...hostWorkers];
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => all.forEach((w) => w.shutdown()));
    }
    console.log(`worker ready on task queue ${config.taskQueue}`);
    await Promise.all(all.map((w) => w.run()));
  } finally {
    await close();
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
