/**
 * Starts ONE Temporal dev server for the whole test run (starting one per test file would cost
 * seconds each on a 2-core machine) and publishes its address through process.env, which the
 * test contexts inherit; see test/helpers/temporal-env.ts.
 */
import { randomInt } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import {
  isTemporalReachable,
  startDevServerOnFreePorts,
  type DevServerHandle,
} from '../src/temporal/dev-server';
import { registerSearchAttributes } from '../src/temporal/search-attributes';
import { ensureTemporalCli } from '../src/temporal/temporal-cli';

declare global {
  // Shared with global-teardown.ts, which runs in the same context.
  var __ACA_TEST_TEMPORAL__: { server: DevServerHandle; tmpDir: string } | undefined;
  var __ACA_TEST_BUNDLE_DIR__: string | undefined;
}

const log = (msg: string) => process.stderr.write(`[temporal] ${msg}\n`);

export default async function globalSetup(): Promise<void> {
  // Test files running side by side share one workflow bundle through this folder (see
  // workflowBundle in helpers/agent-harness.ts); global-teardown.ts removes it.
  const bundleDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-test-bundle-'));
  globalThis.__ACA_TEST_BUNDLE_DIR__ = bundleDir;
  process.env.ACA_TEST_BUNDLE_DIR = bundleDir;
  // This run's block of sandbox uids, one pool of it per test process (see helpers/node-environment.ts).
  process.env.ACA_TEST_UID_BLOCK ??= String(randomInt(1_000_000));

  if (process.env.ACA_TEST_TEMPORAL === '0') return;
  const namespace = process.env.TEMPORAL_NAMESPACE || 'default';

  // A developer can point the tests at a server they already run (and watch in its Web UI).
  const existing = process.env.TEMPORAL_ADDRESS;
  if (existing && (await isTemporalReachable(existing, 3000))) {
    log(`reusing Temporal at ${existing}`);
    await withConnection(existing, (c) => registerSearchAttributes(c, namespace));
    process.env.TEMPORAL_NAMESPACE = namespace;
    return;
  }
  if (existing) log(`TEMPORAL_ADDRESS=${existing} is not reachable; starting a dev server instead`);

  // Tests must never depend on the SDK's download: build with Go or fail with advice.
  const cliPath = await ensureTemporalCli({ onProgress: log, allowSdkDownload: false });
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-test-temporal-'));
  const server = await startDevServerOnFreePorts({
    cliPath,
    dbFile: path.join(tmpDir, 'temporal.db'),
    namespace,
    logFile: path.join(tmpDir, 'server.log'),
  });
  globalThis.__ACA_TEST_TEMPORAL__ = { server, tmpDir };
  await withConnection(server.address, (c) => registerSearchAttributes(c, namespace));
  log(`dev server ${server.address} (UI ${server.uiUrl}) ready in ${server.startupMs} ms`);

  process.env.TEMPORAL_ADDRESS = server.address;
  process.env.TEMPORAL_NAMESPACE = namespace;
  process.env.ACA_TEST_TEMPORAL_UI_URL = server.uiUrl ?? '';
  process.env.ACA_TEST_TEMPORAL_DB_FILE = server.dbFile;
}

async function withConnection(address: string, fn: (c: Connection) => Promise<void>): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    await fn(connection);
  } finally {
    await connection.close();
  }
}
