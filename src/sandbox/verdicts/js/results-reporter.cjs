// aca's Jest results reporter, written into the runner folder as aca-results-reporter.js
// (launch/runner-files.ts) and mounted read-only in the sandbox. It writes to fd 3, the results
// channel (verdicts/results-channel.ts), one JSON line per event.
//
// The Jest reporter, added after Jest's default one. Jest calls it in its main process as
// each test case ends and once at the end of the run. Jest reports a case as it ends only when
// the case ran (or is a todo): a skipped case, or one left out by a `.only` beside it, appears
// only in its file's result, so those are sent when the file ends, each name as often as the file
// lists it beyond what was already sent.
'use strict';
const fs = require('fs');

function send(record) {
  try {
    fs.writeSync(3, JSON.stringify(record) + '\n');
  } catch (err) {
    // The channel is gone: nothing more can be reported, and the worker reads silence as such.
  }
}

class AcaResultsReporter {
  constructor() {
    this.sent = new Map();
  }

  onTestCaseResult(test, result) {
    const names = this.sent.get(test.path) || new Map();
    this.sent.set(test.path, names);
    names.set(result.fullName, (names.get(result.fullName) || 0) + 1);
    send({ t: 'case', file: test.path, name: result.fullName, status: result.status });
  }

  onTestFileResult(test, result) {
    const names = this.sent.get(test.path) || new Map();
    this.sent.delete(test.path);
    for (const assertion of result.testResults || []) {
      const already = names.get(assertion.fullName) || 0;
      if (already > 0) names.set(assertion.fullName, already - 1);
      else send({ t: 'case', file: test.path, name: assertion.fullName, status: assertion.status });
    }
    if (result.testExecError) send({ t: 'file_error', file: test.path });
  }

  onRunComplete(_contexts, results) {
    send({ t: 'done', success: Boolean(results.success) });
  }

  getLastError() {
    return undefined;
  }
}

module.exports = AcaResultsReporter;
