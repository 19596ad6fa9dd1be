// Part of the Jest acceptance verdict (verdicts/jest-verdict-runner.ts), written into the runner
// folder as aca-verdict-runner.js (launch/runner-files.ts) and mounted read-only in the sandbox.
//
// Jest's own test runner, made to run every test file in a worker process even when there is one
// file and one worker (Jest would otherwise run it in its main process). aca's results reporter
// and the results channel (fd 3) stay in Jest's main process; in the worker, fd 3 is Jest's own
// message channel to its main process.
//
// Code under test in the worker can write on that channel too: a file's result of its own making,
// sent before the real one or as a message announcing it, would be taken as the file's. So each
// file's result must carry a seal, an HMAC made by aca's test framework in the worker
// (verdict-test-framework.cjs) under a key this process makes and hands over in a file that the
// framework reads and removes before any test code runs. A result without a valid seal, however it
// arrived, has every test it reports passed turned into a failure.
'use strict';
const { Buffer } = require('buffer');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const jestRunner = require(path.join(__dirname, 'node_modules', 'jest-runner'));
const Base = jestRunner.default || jestRunner;

const SEAL_FILE_VARIABLE = 'ACA_VERDICT_SEAL_FILE';

// SIGUSR1 makes Node open its debugger on 127.0.0.1:9229, from which anything in this process could
// be rewritten; code under test may send it here (the same uid). A listener of its own stops that.
process.on('SIGUSR1', () => undefined);

/** What the seal covers; the framework computes the same (verdict-test-framework.cjs). */
function sealed(testPath, result) {
  const cases = [];
  for (const a of result.testResults) cases.push([String(a.fullName), String(a.status)]);
  return JSON.stringify([
    testPath,
    result.testExecError ? 1 : 0,
    result.numFailingTests,
    result.numPassingTests,
    result.numPendingTests,
    result.numTodoTests,
    cases,
  ]);
}

function sealOk(key, testPath, result) {
  if (!result || typeof result !== 'object' || !Array.isArray(result.testResults)) return false;
  if (typeof result.acaSeal !== 'string' || !/^[0-9a-f]{64}$/.test(result.acaSeal)) return false;
  let body;
  try {
    body = sealed(testPath, result);
  } catch (err) {
    return false;
  }
  const expected = crypto.createHmac('sha256', key).update(body, 'utf8').digest();
  return crypto.timingSafeEqual(expected, Buffer.from(result.acaSeal, 'hex'));
}

function refused(testPath, result) {
  const message =
    "aca: this test file's result did not come from aca's test framework in the worker " +
    '(no valid seal); it cannot be trusted';
  const base = result && typeof result === 'object' ? result : {};
  const testResults = (Array.isArray(base.testResults) ? base.testResults : []).map((a) =>
    a && a.status === 'passed'
      ? { ...a, status: 'failed', failureMessages: [message], failureDetails: [{ message }] }
      : a,
  );
  const failing = testResults.filter((a) => a && a.status === 'failed').length;
  return {
    ...base,
    testFilePath: testPath,
    testResults,
    numPassingTests: 0,
    numFailingTests: failing,
    testExecError: { message, stack: '' },
    failureMessage: message,
  };
}

class AcaVerdictRunner extends Base {
  constructor(globalConfig, context) {
    super(globalConfig, context);
    this.sealKey = crypto.randomBytes(32);
  }

  on(eventName, listener) {
    if (eventName !== 'test-file-success') return super.on(eventName, listener);
    return super.on(eventName, ([test, result]) => {
      if (!sealOk(this.sealKey, test.path, result)) return listener([test, refused(test.path, result)]);
      delete result.acaSeal;
      return listener([test, result]);
    });
  }

  async runTests(tests, watcher, options) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-verdict-'));
    const file = path.join(dir, 'seal-key');
    fs.writeFileSync(file, this.sealKey, { mode: 0o400 });
    process.env[SEAL_FILE_VARIABLE] = file;
    try {
      return await super.runTests(tests, watcher, { ...options, serial: false });
    } finally {
      delete process.env[SEAL_FILE_VARIABLE];
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

module.exports = AcaVerdictRunner;
