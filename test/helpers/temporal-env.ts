/**
 * How tests find the Temporal dev server that test/global-setup.ts started (or reused).
 *
 * Global setup runs in Jest's parent process before any test worker or in-band test context
 * exists, and both copy the parent's process.env, so plain environment variables are enough.
 */
export interface TestTemporal {
  address: string;
  namespace: string;
  uiUrl: string | undefined;
  /** Undefined when an already-running server was reused. */
  dbFile: string | undefined;
}

export function getTestTemporal(): TestTemporal {
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) {
    throw new Error(
      'TEMPORAL_ADDRESS is not set: the Jest global setup did not provide a Temporal server ' +
        '(was ACA_TEST_TEMPORAL=0 set, or the test run without jest.config.js?)',
    );
  }
  return {
    address,
    namespace: process.env.TEMPORAL_NAMESPACE || 'default',
    uiUrl: process.env.ACA_TEST_TEMPORAL_UI_URL || undefined,
    dbFile: process.env.ACA_TEST_TEMPORAL_DB_FILE || undefined,
  };
}
