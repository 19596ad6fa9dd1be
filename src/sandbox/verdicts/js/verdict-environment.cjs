// Part of the Jest acceptance verdict (verdicts/jest-verdict-runner.ts), written into the runner
// folder as aca-verdict-environment.js (launch/runner-files.ts) and mounted read-only in the sandbox.
//
// Jest's node environment with an event handler that Jest calls with each test event. The
// environment is loaded in the worker's own global context, not the tests' (the code under test
// reaches neither it nor what it holds without first escaping the tests' context), and keeps a
// record of each test there, which the test framework (verdict-test-framework.cjs) holds Jest's
// result against once the file has run:
// - as a test is registered, its function is replaced by one of this context's that notes how each
//   call of the test's own function ended (returned, threw, its promise settled), and that function
//   and the `failing` flag are fixed on Jest's record of the test, so neither can be swapped;
// - a failure Jest announces for a test (its function, its `*Each` hooks) is counted, and a test
//   whose run raised errors but ends with none recorded had them removed, and fails saying so.
// The guard (verdict-guard.cjs) freezes the list of Jest's event handlers before the test file
// loads, so this handler hears every event. Code under test can still call it with events of its
// own making: those can only add failures or records that have no result, both of which fail.
'use strict';
const path = require('path');
const { isPromise } = require('util').types;
const nodeEnvironment = require(path.join(__dirname, 'node_modules', 'jest-environment-node'));
const Base = nodeEnvironment.TestEnvironment || nodeEnvironment.default || nodeEnvironment;

// Taken as the module loads, before any test code runs: code under test that reaches this context
// and replaces its built-ins changes nothing this module does.
const apply = Reflect.apply;
const defineProperty = Object.defineProperty;
const describeOwn = Object.getOwnPropertyDescriptor;
const freeze = Object.freeze;
const settle = Promise.prototype.then;
const objectTag = Object.prototype.toString;
const text = String;
const weakGet = WeakMap.prototype.get;
const weakSet = WeakMap.prototype.set;
const weakHas = WeakMap.prototype.has;
const ROOT = 'ROOT_DESCRIBE_BLOCK';

/** Each environment's records, in the order their tests were registered. */
const books = new WeakMap();

function fix(record, key) {
  const d = describeOwn(record, key);
  if (d && d.configurable && 'value' in d) {
    defineProperty(record, key, {
      value: d.value,
      writable: false,
      enumerable: d.enumerable,
      configurable: false,
    });
  }
}

/** The name Jest gives the test in its result: the titles from the outermost describe down. */
function fullNameOf(test) {
  let name = '';
  for (let block = test; block; block = block.parent) {
    const title = text(block.name);
    if (block.parent || title !== ROOT) name = name === '' ? title : `${title} ${name}`;
  }
  return name;
}

/**
 * A function of this context in place of the test's own. Each call starts a new attempt; only how
 * the last attempt ended counts. The test's own function passes only by running its assertions to
 * the end, whoever calls it.
 */
function watched(fn, note) {
  let attempt = 0;
  const begin = () => {
    attempt += 1;
    note.outcome = 'running';
    note.failures = 0;
    return attempt;
  };
  const end = (mine, outcome) => {
    if (mine === attempt && note.outcome === 'running') note.outcome = outcome;
  };
  const follow = (mine, value) => {
    if (isPromise(value)) {
      try {
        apply(settle, value, [() => end(mine, 'returned'), () => end(mine, 'threw')]);
      } catch (err) {
        end(mine, 'unreadable');
      }
    } else if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
      // A thenable that is not a Promise says itself whether it settled: it is not believed.
      end(mine, 'thenable');
    } else {
      end(mine, 'returned');
    }
  };
  let wrapper;
  if (fn.length > 0) {
    // The test takes Jest's `done`: it has passed when `done` is called without a reason.
    wrapper = function (done, ...rest) {
      const mine = begin();
      const doneWatched = function (reason) {
        end(mine, reason ? 'threw' : 'returned');
        return apply(done, this, [reason]);
      };
      const args = [doneWatched];
      for (let i = 0; i < rest.length; i += 1) args[i + 1] = rest[i];
      try {
        return apply(fn, this, args);
      } catch (err) {
        end(mine, 'threw');
        throw err;
      }
    };
  } else if (apply(objectTag, fn, []) === '[object GeneratorFunction]') {
    wrapper = function* (...args) {
      const mine = begin();
      try {
        const value = yield* apply(fn, this, args);
        follow(mine, value);
        return value;
      } catch (err) {
        end(mine, 'threw');
        throw err;
      }
    };
  } else {
    wrapper = function (...args) {
      const mine = begin();
      let value;
      try {
        value = apply(fn, this, args);
      } catch (err) {
        end(mine, 'threw');
        throw err;
      }
      follow(mine, value);
      return value;
    };
  }
  defineProperty(wrapper, 'length', { value: fn.length });
  defineProperty(wrapper, 'name', { value: fn.name });
  return wrapper;
}

class AcaVerdictEnvironment extends Base {
  constructor(config, context) {
    super(config, context);
    apply(weakSet, books, [this, { state: null, notes: [], count: 0, byTest: new WeakMap() }]);
  }

  handleTestEvent(event, state) {
    const book = apply(weakGet, books, [this]);
    // The first event, `setup`, comes before the guard and the test file run: its state is Jest's own.
    if (book.state === null) book.state = state;
    switch (event.name) {
      case 'add_test': {
        const block = book.state.currentDescribeBlock;
        const test = block && block.children[block.children.length - 1];
        if (!test || test.type !== 'test' || apply(weakHas, book.byTest, [test])) break;
        if (test.fn !== event.fn) {
          test.errors.push(new Error('aca: the test registered is not the one Jest was given'));
          break;
        }
        const note = {
          fullName: fullNameOf(test),
          failing: test.failing === true,
          outcome: 'never ran',
          failures: 0,
        };
        book.notes[book.count] = note;
        book.count += 1;
        apply(weakSet, book.byTest, [test, note]);
        if (typeof test.fn === 'function') {
          const d = describeOwn(test, 'fn');
          if (d && d.configurable && 'value' in d) test.fn = watched(test.fn, note);
        }
        fix(test, 'fn');
        fix(test, 'failing');
        break;
      }
      case 'test_fn_failure':
      case 'hook_failure': {
        const note = event.test && apply(weakGet, book.byTest, [event.test]);
        if (note) note.failures += 1;
        break;
      }
      case 'test_done': {
        const note = apply(weakGet, book.byTest, [event.test]);
        if (note && note.failures > 0 && event.test.errors.length === 0) {
          event.test.errors.push(
            new Error('aca: this test failed, but its errors were removed while it ran'),
          );
        }
        break;
      }
      default:
        break;
    }
  }

  /**
   * What this environment saw of each test, in registration order, for the test framework. Read
   * once the file's tests have all run.
   */
  static notesOf(environment) {
    const book = apply(weakGet, books, [environment]);
    if (!book) return null;
    const notes = [];
    for (let i = 0; i < book.count; i += 1) notes[i] = book.notes[i];
    return notes;
  }
}

module.exports = freeze(AcaVerdictEnvironment);
