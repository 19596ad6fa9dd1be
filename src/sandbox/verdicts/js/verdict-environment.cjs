// Part of the Jest acceptance verdict (verdicts/jest-verdict-runner.ts), written into the runner
// folder as aca-verdict-environment.js (launch/runner-files.ts) and mounted read-only in the sandbox.
//
// Jest's node environment with an event handler that Jest calls with each test event. The
// environment is loaded in the worker's own global context, not the tests' (the code under test
// reaches neither it nor what it holds without first escaping the tests' context), and checks Jest's
// own record of each test, which lives in the tests' context:
// - as a test is registered, its function and its `failing` flag are fixed on Jest's record of it,
//   so a function put in place of the test's own, or a test turned into one that passes by failing,
//   cannot be;
// - a test whose run raised errors (its function or its `*Each` hooks) but ends with none recorded
//   had them removed, and fails with an error saying so.
'use strict';
const path = require('path');
const nodeEnvironment = require(path.join(__dirname, 'node_modules', 'jest-environment-node'));
const Base = nodeEnvironment.TestEnvironment || nodeEnvironment.default || nodeEnvironment;

const failures = new WeakMap();

function fix(record, key) {
  const d = Object.getOwnPropertyDescriptor(record, key);
  if (d && d.configurable && 'value' in d) {
    Object.defineProperty(record, key, {
      value: d.value,
      writable: false,
      enumerable: d.enumerable,
      configurable: false,
    });
  }
}

class AcaVerdictEnvironment extends Base {
  handleTestEvent(event, state) {
    switch (event.name) {
      case 'add_test': {
        const block = state.currentDescribeBlock;
        const test = block && block.children[block.children.length - 1];
        if (!test || test.type !== 'test') break;
        if (test.fn !== event.fn) {
          test.errors.push(new Error('aca: the test registered is not the one Jest was given'));
          break;
        }
        fix(test, 'fn');
        fix(test, 'failing');
        break;
      }
      case 'test_start':
      case 'test_retry':
        failures.set(event.test, 0);
        break;
      case 'test_fn_failure':
        failures.set(event.test, (failures.get(event.test) || 0) + 1);
        break;
      case 'hook_failure':
        if (event.test) failures.set(event.test, (failures.get(event.test) || 0) + 1);
        break;
      case 'test_done':
        if ((failures.get(event.test) || 0) > 0 && event.test.errors.length === 0) {
          event.test.errors.push(
            new Error('aca: this test failed, but its errors were removed while it ran'),
          );
        }
        break;
      default:
        break;
    }
  }
}

module.exports = AcaVerdictEnvironment;
