// Part of the Jest acceptance verdict (verdicts/jest-verdict-runner.ts), written into the runner
// folder as aca-verdict-runner.js (launch/runner-files.ts) and mounted read-only in the sandbox.
//
// Jest's own test runner, made to run every test file in a worker process even when there is one
// file and one worker (Jest would otherwise run it in its main process). aca's results reporter
// and the results channel (fd 3) stay in Jest's main process; in the worker, fd 3 is Jest's own
// message channel to its main process, whose messages Jest parses and checks itself.
'use strict';
const path = require('path');
const jestRunner = require(path.join(__dirname, 'node_modules', 'jest-runner'));
const Base = jestRunner.default || jestRunner;

class AcaVerdictRunner extends Base {
  async runTests(tests, watcher, options) {
    return super.runTests(tests, watcher, { ...options, serial: false });
  }
}

module.exports = AcaVerdictRunner;
