import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import type { AcaConfig } from '../config';
import { startDevServer, isTemporalReachable, type DevServerHandle } from '../temporal/dev-server';
import { registerSearchAttributes } from '../temporal/search-attributes';
import { ensureTemporalCli } from '../temporal/temporal-cli';
import { writeLocalStackRecord } from '../temporal/local-stack-record';
import type { CliIO } from './cli-context';

export interface LocalTemporal {
  address: string;
  /** The server this process started, or null when one was already running. */
  server: DevServerHandle | null;
}

/** Where `aca up` and `aca demo` keep the dev server's state, so runs survive a restart. */
export function devServerDbFile(config: AcaConfig): string {
  return path.join(config.home, 'temporal', 'dev-server.db');
}

/**
 * Uses the Temporal server at TEMPORAL_ADDRESS when one answers; otherwise finds
 * or builds the CLI and starts its dev server there. Either way the agent's search
 * attributes are registered before this returns.
 */
export async function ensureLocalTemporal(
  config: AcaConfig,
  io: CliIO,
  options: { detached: boolean },
): Promise<LocalTemporal> {
  let server: DevServerHandle | null = null;
  if (await isTemporalReachable(config.temporalAddress, 2000)) {
    io.err(`Using the Temporal server at ${config.temporalAddress}.`);
  } else {
    const [host, portText] = splitAddress(config.temporalAddress);
    const cliPath = await ensureTemporalCli({ onProgress: (message) => io.err(`  ${message}`) });
    const dbFile = devServerDbFile(config);
    io.err(`Starting the Temporal dev server on ${config.temporalAddress} (state in ${dbFile}) ...`);
    server = await startDevServer({
      cliPath,
      dbFile,
      ip: host,
      port: Number(portText),
      uiPort: Number(new URL(config.uiUrl).port || 8233),
      namespace: config.namespace,
      detached: options.detached,
      logFile: path.join(config.home, 'temporal', 'dev-server.log'),
    });
    io.err(
      `Temporal dev server ready in ${(server.startupMs / 1000).toFixed(1)}s; Web UI at ${config.uiUrl}`,
    );
    // What later commands of this home go to without TEMPORAL_ADDRESS, and link to.
    writeLocalStackRecord(config.home, { address: config.temporalAddress, uiUrl: config.uiUrl });
  }
  const connection = await Connection.connect(config.temporalConnection);
  try {
    await registerSearchAttributes(connection, config.namespace);
  } finally {
    await connection.close();
  }
  return { address: config.temporalAddress, server };
}

function splitAddress(address: string): [string, string] {
  const match = /^(.*):(\d+)$/.exec(address);
  if (!match) throw new Error(`TEMPORAL_ADDRESS must be host:port, got "${address}"`);
  return [match[1], match[2]];
}
