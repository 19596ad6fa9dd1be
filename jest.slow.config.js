/**
 * `npm run test:slow`: the minutes-long end-to-end cases under test/slow, each a longer path to
 * what faster tests in `npm test` already check (each file names them; docs/testing.md lists
 * them). Nightly, not in CI.
 *
 * @type {import('jest').Config}
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/slow'],
  testPathIgnorePatterns: ['/node_modules/'],
  reporters: [
    'default',
    ['<rootDir>/test/helpers/suite-times-reporter.mjs', { outputFile: 'test-output/slow-suite-times.json' }],
  ],
};
