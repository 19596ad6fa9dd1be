/**
 * `npm run test:slow`: the minutes-long end-to-end cases under test/slow, each a longer path to
 * what a faster test in `npm test` already checks (test/slow/README.md names which). Nightly,
 * not in CI.
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
