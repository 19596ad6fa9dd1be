import { NativeConnection } from '@temporalio/worker';
import type { AcaConfig } from '../config';
import { createAcaWorker, installRuntime } from '../worker';
import { EXIT, type CliIO } from './cli-context';
import { ensureLocalTemporal } from './local-stack';

/** `aca up`: dev server (if none runs), search attributes and a worker, in the foreground until Ctrl-C. */
export async function upCommand(config: AcaConfig, io: CliIO): Promise<number> {
  installRuntime(config);
  const stack = await ensureLocalTemporal(config, io, { detached: false });
  const connection = await NativeConnection.connect(config.temporalConnection);
  try {
    const worker = await createAcaWorker({ connection, config });
    io.out(
      `aca is up: Temporal at ${config.temporalAddress}, Web UI at ${config.uiUrl}, worker on "${config.taskQueue}". Ctrl-C stops it.`,
    );
    if (stack.server && !config.temporalAddressConfigured) {
      // Other terminals with this ACA_HOME find this server; anything else has to be told.
      io.err(
        `Commands with ACA_HOME=${config.home} use this server; elsewhere set TEMPORAL_ADDRESS=${config.temporalAddress} ACA_UI_URL=${config.uiUrl}`,
      );
    }
    await worker.run();
  } finally {
    await connection.close();
    if (stack.server) {
      io.err('Stopping the Temporal dev server ...');
      await stack.server.stop();
    }
  }
  return EXIT.success;
}
