/**
 * The tests CI runs (`npm test`). The minutes-long end-to-end cases that a faster test already
 * covers live under test/slow and run with `npm run test:slow` (jest.slow.config.js).
 *
 * @type {import('jest').Config}
 */
module.exports = {
  // Jest's node environment, each test process with sandbox uids of its own.
  testEnvironment: '<rootDir>/test/helpers/node-environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/slow/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  testTimeout: 120000,
  // Two cores: two suites side by side, against the one shared Temporal dev server (each suite
  // polls task queues of its own) and with sandbox uids of their own (helpers/node-environment.ts).
  // Suites that must have the machine to themselves run first, alone; see
  // helpers/serial-first-runner.ts.
  maxWorkers: 2,
  // test.concurrent cases of one suite (test/sandbox/jest-forgery.test.ts, each case a sandboxed
  // verdict run) two at a time: a third would only queue for the two cores.
  maxConcurrency: 2,
  runner: [
    '<rootDir>/test/helpers/serial-first-runner.ts',
    {
      serial: [
        // Timing-bound limits (fork bomb, CPU seconds, wall timeouts, a run's 2 GiB memory cgroup)
        // want the cores to themselves, and it listens on 5432 and 7233 when nothing does. The
        // other escape cases (test/sandbox/escape.test.ts) run side by side.
        'test/sandbox/escape-limits.test.ts',
      ],
    },
  ],
  // A fresh clone has no timings in Jest's cache; the longest suites start first anyway.
  testSequencer: '<rootDir>/test/helpers/slowest-first-sequencer.mjs',
  reporters: ['default', '<rootDir>/test/helpers/suite-times-reporter.mjs'],
  // One Temporal dev server for the whole run; tests read it via test/helpers/temporal-env.ts.
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  // The Temporal SDK's native runtime (installed once per test process) keeps threads alive
  // after the last test; without this Jest would wait for them forever and CI would time out.
  forceExit: true,
};
