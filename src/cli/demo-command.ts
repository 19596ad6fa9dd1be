import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { AcaConfig } from '../config';
import { loadBuiltinScenario, scriptedRunInput } from '../llm/scenario';
import { ScriptedLlmServer } from '../llm/scripted-server';
import type { RunResult } from '../shared/run-types';
import { createAcaWorker, installRuntime } from '../worker';
import { jsonForTerminal } from '../shared/terminal-text';
import { EXIT, type CliIO } from './cli-context';
import { followRun } from './follow-run';
import { ensureLocalTemporal } from './local-stack';
import { summaryLines } from './progress';
import { AcaClient, startRunWorkflow } from '../api/aca-client';

export const DEMO_SCENARIO = 'demo-fizzbuzz';

/**
 * `aca demo`: brings up what is missing, then runs the built-in offline scenario
 * end to end against the scripted model, on a worker of its own so that a worker
 * configured for a real model never picks it up.
 */
export async function demoCommand(config: AcaConfig, flags: { json?: boolean }, io: CliIO): Promise<number> {
  const scenario = loadBuiltinScenario(DEMO_SCENARIO);
  const stack = await ensureLocalTemporal(config, io, { detached: true });

  const llm = await new ScriptedLlmServer().start();
  io.err(`Scripted model (offline, replaying scenario "${scenario.name}") at ${llm.url}`);
  const taskQueue = `${config.taskQueue}-demo`;
  // The worker's INFO lines (webpack, state changes) would bury the demo's own output.
  installRuntime(config, { logLevel: 'ERROR' });
  const nativeConnection = await NativeConnection.connect(config.temporalConnection);
  const worker = await createAcaWorker({
    connection: nativeConnection,
    config,
    taskQueue,
    openaiBaseUrl: llm.url,
  });
  const workerRun = worker.run();
  const connection = await Connection.connect(config.temporalConnection);
  try {
    const client = new Client({ connection, namespace: config.namespace });
    const workflowId = `aca-demo-${Date.now().toString(36)}`;
    await startRunWorkflow(
      client,
      {
        workflowId,
        input: scriptedRunInput(scenario),
      },
      taskQueue,
    );
    const link = new AcaClient(client, config).webUrl(workflowId);
    io.err(`Started ${workflowId}: ${scenario.task}`);
    io.err(`Follow it in the Web UI: ${link}`);
    const followed = await followRun(new AcaClient(client, config).run(workflowId).handle, io, {
      quiet: flags.json === true,
    });
    if (followed.kind === 'interrupted') {
      io.err(
        `Interrupted; ${workflowId} stays in Temporal (re-run \`aca demo\` or \`aca worker\` with the scripted model to finish it).`,
      );
      return EXIT.cancelled;
    }
    const result: RunResult = followed.result;
    if (flags.json) io.out(jsonForTerminal(result));
    else for (const line of summaryLines(result, link)) io.out(line);
    if (stack.server) {
      io.err(
        `The Temporal dev server keeps running in the background (pid ${stack.server.pid}) so the Web UI stays up; stop it with \`kill ${stack.server.pid}\`.`,
      );
    }
    return result.state === 'SUCCESS' ? EXIT.success : EXIT.failed;
  } finally {
    worker.shutdown();
    await workerRun.catch(() => undefined);
    await nativeConnection.close();
    await connection.close();
    await llm.stop();
  }
}
