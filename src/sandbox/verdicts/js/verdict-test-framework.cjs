// Part of the Jest acceptance verdict (verdicts/jest-verdict-runner.ts), written into the runner
// folder as aca-verdict-test-framework.js (launch/runner-files.ts) and mounted read-only in the
// sandbox.
//
// Jest's own test framework (jest-circus) for each test file, with its result held against what
// aca's environment (verdict-environment.cjs) saw, in the worker's own context, which the tests'
// code does not reach without first escaping its own. Jest's result is made in the tests' context
// from records the code under test can change; here, a test Jest reports passed stays passed only
// when the environment saw its own function run to the end on its last attempt (or fail, for a
// `.failing` test) and saw no failure announced for it. Every registered test must have a result.
// Nothing is ever turned into a pass. Before the file runs, the modules given with the acceptance
// tests are guarded (verdict-acceptance-modules.cjs).
//
// The result is then sealed (an HMAC under a key Jest's main process handed over in a file, read
// and removed here as this module loads, before any test code runs), so that the main process
// can tell it from a result that code under test sent on the worker's channel
// (verdict-runner.cjs). What the seal is made with is taken as this module loads, so that code
// under test that reaches this context cannot change how it is made.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const Environment = require('./aca-verdict-environment.js');
const guardAcceptanceModules = require('./aca-verdict-acceptance-modules.js');

const apply = Reflect.apply;
const stringify = JSON.stringify;
const createHmac = crypto.createHmac;
const probe = createHmac('sha256', 'aca');
const update = probe.update;
const digest = probe.digest;
const SEAL_FILE_VARIABLE = 'ACA_VERDICT_SEAL_FILE';

// The worker's debugger could read this module's closure, the key among it: its ways in are closed
// before any test code runs. SIGUSR1 would open it on a port (a listener of its own stops that);
// the inspector module and its binding would open a session in this process.
process.on('SIGUSR1', () => undefined);
function closed() {
  throw new Error("aca: the debugger is not available in the acceptance verdict's worker");
}
for (const name of ['inspector', 'inspector/promises']) {
  let exported;
  try {
    exported = require(name);
  } catch (err) {
    continue;
  }
  for (const member of ['Session', 'open', 'url', 'waitForDebugger']) {
    Object.defineProperty(exported, member, { value: closed, writable: false, configurable: false });
  }
}
const binding = process.binding;
Object.defineProperty(process, 'binding', {
  value(name) {
    const asked = String(name);
    if (asked === 'inspector') closed();
    return apply(binding, process, [asked]);
  },
  writable: false,
  configurable: false,
});

/** The key, as a key object: its bytes live outside the JavaScript heap. Null when there is none. */
const key = (() => {
  const file = process.env[SEAL_FILE_VARIABLE];
  delete process.env[SEAL_FILE_VARIABLE];
  if (!file) return null;
  try {
    const bytes = fs.readFileSync(file);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
    const made = crypto.createSecretKey(bytes);
    bytes.fill(0);
    return made;
  } catch (err) {
    return null;
  }
})();

/** What the seal covers; the main process computes the same (verdict-runner.cjs). */
function sealed(testPath, result) {
  const cases = [];
  const list = result.testResults;
  for (let i = 0; i < list.length; i += 1) cases[i] = [String(list[i].fullName), String(list[i].status)];
  return stringify([
    testPath,
    result.testExecError ? 1 : 0,
    result.numFailingTests,
    result.numPassingTests,
    result.numPendingTests,
    result.numTodoTests,
    cases,
  ]);
}

function seal(testPath, result) {
  if (key === null) return result;
  const hmac = createHmac('sha256', key);
  apply(update, hmac, [sealed(testPath, result), 'utf8']);
  result.acaSeal = apply(digest, hmac, ['hex']);
  return result;
}

const circus = require(require.resolve('jest-circus/runner', { paths: [__dirname] }));
const run = circus.default || circus;

const WHY = {
  'never ran': 'its function never ran',
  running: 'its function had not finished',
  threw: 'its function failed',
  thenable: 'its function returned a thenable that is not a Promise, whose settling cannot be trusted',
  unreadable: 'what its function returned could not be followed',
};

/** Why a test reported passed has not passed, or null when it has. */
function refusal(note) {
  if (note.failing) {
    return note.outcome === 'threw' ? null : 'it is marked failing, but its function did not fail';
  }
  if (note.outcome !== 'returned') return WHY[note.outcome] || `its function ended as ${note.outcome}`;
  if (note.failures > 0) return 'a failure was announced for it, then taken back';
  return null;
}

function hold(result, notes) {
  if (notes === null) {
    return {
      ...result,
      testExecError: { message: 'aca: the verdict environment was not loaded', stack: '' },
    };
  }
  // Notes by name, each name's in registration order; plain objects and counters throughout, so
  // that nothing here goes through a method the tests' code could have replaced.
  const byName = Object.create(null);
  for (let i = 0; i < notes.length; i += 1) {
    const name = notes[i].fullName;
    const entry = byName[name] || (byName[name] = { notes: Object.create(null), count: 0, next: 0 });
    entry.notes[entry.count] = notes[i];
    entry.count += 1;
  }
  const list = result.testResults || [];
  const testResults = [];
  let refused = 0;
  let lines = '';
  for (let i = 0; i < list.length; i += 1) {
    const assertion = list[i];
    const entry = byName[assertion.fullName];
    const note = entry && entry.next < entry.count ? entry.notes[entry.next++] : undefined;
    testResults[i] = assertion;
    if (assertion.status !== 'passed') continue;
    const why = note ? refusal(note) : 'no test of that name was registered';
    if (why === null) continue;
    const message = `aca: Jest reported this test passed, but ${why}`;
    refused += 1;
    lines += `${lines === '' ? '' : '\n'}${assertion.fullName}: ${message}`;
    testResults[i] = {
      ...assertion,
      status: 'failed',
      failureMessages: [message],
      failureDetails: [{ message }],
    };
  }
  let missing = '';
  for (let i = 0; i < notes.length; i += 1) {
    const entry = byName[notes[i].fullName];
    if (entry.next < entry.count) {
      missing += `${missing === '' ? '' : ', '}${notes[i].fullName}`;
      entry.next += 1;
    }
  }
  const held = {
    ...result,
    testResults,
    numPassingTests: result.numPassingTests - refused,
    numFailingTests: result.numFailingTests + refused,
  };
  if (missing !== '') {
    const message = `aca: tests were registered that have no result: ${missing}`;
    lines += `${lines === '' ? '' : '\n'}${message}`;
    held.testExecError = { message, stack: '' };
  }
  if (lines !== '')
    held.failureMessage = result.failureMessage ? `${result.failureMessage}\n${lines}` : lines;
  return held;
}

module.exports = async function acaVerdictTestFramework(
  globalConfig,
  config,
  environment,
  runtime,
  testPath,
  sendMessageToJest,
) {
  guardAcceptanceModules(runtime, config.rootDir);
  const result = await run(globalConfig, config, environment, runtime, testPath, sendMessageToJest);
  return seal(testPath, hold(result, Environment.notesOf(environment)));
};
