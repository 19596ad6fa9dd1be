/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  testTimeout: 120000,
  // Tests share one Temporal dev server and the machine has two cores.
  maxWorkers: 1,
  // One Temporal dev server for the whole run; tests read it via test/helpers/temporal-env.ts.
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // The Temporal SDK's native runtime (installed once per test process) keeps threads alive
  // after the last test; without this Jest would wait for them forever and CI would time out.
  forceExit: true,
};
