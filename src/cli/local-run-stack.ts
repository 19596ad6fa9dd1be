import type { AcaConfig } from '../config';
import { isTemporalReachable } from '../temporal/dev-server';
import type { CliIO } from './cli-context';
import { ensureLocalTemporal } from './local-stack';

/** What `aca run` brought up itself, to be taken down (all but the dev server) when the run ends. */
export interface LocalRunStack {
  close(): Promise<void>;
}

/**
 * `aca run` on a laptop without `aca up` in another terminal: when no Temporal address was
 * configured and nothing answers at the default one, it brings up the local stack as `aca demo`
 * does (the dev server, left running for the Web UI, and a worker in this process on the usual
 * task queue, so `aca worker` can take over an interrupted run later). With a configured address
 * it never starts anything. Null when nothing was needed.
 */
export async function ensureLocalRunStack(config: AcaConfig, io: CliIO): Promise<LocalRunStack | null> {
  if (config.temporalAddressConfigured) return null;
  if (await isTemporalReachable(config.temporalAddress, 1500)) return null;
  io.err(
    `No Temporal server answers at ${config.temporalAddress}: starting the local stack (dev server, a worker in this process), as aca demo does.`,
  );
  const stack = await ensureLocalTemporal(config, io, { detached: true });
  // Loaded here, not at the top: every other `aca` command starts without the worker's modules.
  const [{ NativeConnection }, { createAcaWorker, installRuntime }] = await Promise.all([
    import('@temporalio/worker'),
    import('../worker'),
  ]);
  installRuntime(config, { logLevel: 'ERROR' });
  const connection = await NativeConnection.connect(config.temporalConnection);
  const worker = await createAcaWorker({ connection, config });
  const running = worker.run();
  return {
    async close() {
      worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      if (stack.server) {
        io.err(
          `The Temporal dev server keeps running (pid ${stack.server.pid}) so the Web UI stays up at ${config.uiUrl}; stop it with \`kill ${stack.server.pid}\`.`,
        );
      }
    },
  };
}
