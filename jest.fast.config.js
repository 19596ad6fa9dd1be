/**
 * The unit tests of the workflow code and the activities' decisions: no Temporal server, no
 * sandbox, seconds in all. `npm run test:mutation` runs them under StrykerJS (stryker.config.json);
 * the full suite (jest.config.js) runs them too.
 */
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: [
    '**/test/unit/workflow-run-*.test.ts',
    '**/test/unit/activity-errors.test.ts',
    '**/test/unit/run-details.test.ts',
    '**/test/unit/environment-diagnosis.test.ts',
    '**/test/unit/baseline-verdict.test.ts',
  ],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  testTimeout: 20000,
};
