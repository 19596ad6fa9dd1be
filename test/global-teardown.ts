/** Stops the dev server test/global-setup.ts started (a reused server is left alone) and removes the shared bundle. */
import * as fs from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const bundleDir = globalThis.__ACA_TEST_BUNDLE_DIR__;
  globalThis.__ACA_TEST_BUNDLE_DIR__ = undefined;
  if (bundleDir) fs.rmSync(bundleDir, { recursive: true, force: true });
  const state = globalThis.__ACA_TEST_TEMPORAL__;
  if (!state) return;
  globalThis.__ACA_TEST_TEMPORAL__ = undefined;
  await state.server.stop();
  // Keep the db and log when asked, to inspect a failing run in the Web UI afterwards.
  if (process.env.ACA_TEST_KEEP_TEMPORAL !== '1') fs.rmSync(state.tmpDir, { recursive: true, force: true });
}
