/**
 * Files of the Jest acceptance verdict (jest-verdict-runner.ts), written out as plain .js files at
 * run time (see runner-files.ts), because Jest loads them with require() and the build does not
 * copy .js files to dist. Inside the sandbox they are mounted read-only.
 */

/**
 * Jest's own test runner, made to run every test file in a worker process even when there is one
 * file and one worker (Jest would otherwise run it in its main process). aca's results reporter
 * and the results channel (fd 3) stay in Jest's main process; in the worker, fd 3 is Jest's own
 * message channel to its main process, whose messages Jest parses and checks itself.
 */
export const JEST_VERDICT_RUNNER = String.raw`'use strict';
const path = require('path');
const jestRunner = require(path.join(__dirname, 'node_modules', 'jest-runner'));
const Base = jestRunner.default || jestRunner;

class AcaVerdictRunner extends Base {
  async runTests(tests, watcher, options) {
    return super.runTests(tests, watcher, { ...options, serial: false });
  }
}

module.exports = AcaVerdictRunner;
`;

/**
 * Run by Jest in each test file's global context after the framework is installed and before the
 * test file (and so the code under test it imports) is loaded. It makes what the assertions rest
 * on impossible to replace from then on:
 * - the framework's globals (`test`, `it`, `describe`, `expect`, hooks and their `.skip`, `.each`,
 *   `.only`… members) can be neither reassigned nor redefined;
 * - `expect`'s built-in matchers cannot be overridden through `expect.extend`, nor custom
 *   equality testers added (each would let any value equal any other);
 * - the static members of the intrinsics the matchers call (`Object.is`, `Object.keys`,
 *   `Array.isArray`, `Reflect`, `Symbol.for`, …) are frozen and their global names fixed;
 * - `Object.prototype`, `Array.prototype` and `Function.prototype` take no new properties (a
 *   property such as `asymmetricMatch` there would make every value match);
 * and after each test and at the end of the file it checks that no existing property of the
 * built-in prototypes was replaced, failing the test when one was. Code that assigns to a frozen
 * member fails where it does so (a TypeError in strict code; ignored in sloppy code).
 */
export const JEST_VERDICT_GUARD = String.raw`'use strict';
(() => {
  const g = globalThis;
  const defineProperty = Object.defineProperty;
  const describeOwn = Object.getOwnPropertyDescriptor;
  const ownKeys = Reflect.ownKeys;
  const freeze = Object.freeze;
  const preventExtensions = Object.preventExtensions;
  const is = Object.is;
  const ErrorType = Error;

  function lock(target, key) {
    const d = describeOwn(target, key);
    if (!d || !d.configurable) return d;
    if ('value' in d) {
      defineProperty(target, key, { value: d.value, writable: false, enumerable: d.enumerable, configurable: false });
    } else {
      defineProperty(target, key, { get: d.get, set: d.set, enumerable: d.enumerable, configurable: false });
    }
    return d;
  }

  function lockTree(value, depth, seen) {
    if (depth === 0 || value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
    if (seen.has(value)) return;
    seen.add(value);
    for (const key of ownKeys(value)) {
      if (key === 'prototype') continue;
      const d = lock(value, key);
      if (d && 'value' in d) lockTree(d.value, depth - 1, seen);
    }
  }

  const seen = new Set();
  const framework = ['test', 'it', 'describe', 'xit', 'xtest', 'xdescribe', 'fit', 'fdescribe',
    'beforeAll', 'beforeEach', 'afterAll', 'afterEach', 'expect'];
  for (const name of framework) {
    if (describeOwn(g, name) === undefined) continue;
    lock(g, name);
    lockTree(g[name], 5, seen);
  }

  const matchersObject = g[Symbol.for('$$jest-matchers-object')];
  if (matchersObject && typeof matchersObject === 'object') {
    lock(matchersObject, 'matchers');
    lock(matchersObject, 'customEqualityTesters');
    if (matchersObject.matchers) for (const key of ownKeys(matchersObject.matchers)) lock(matchersObject.matchers, key);
    if (Array.isArray(matchersObject.customEqualityTesters)) freeze(matchersObject.customEqualityTesters);
  }

  const intrinsics = ['Object', 'Array', 'Reflect', 'JSON', 'Math', 'Number', 'String', 'Symbol',
    'Boolean', 'Map', 'Set', 'WeakMap', 'WeakSet', 'Promise', 'Function', 'BigInt'];
  for (const name of intrinsics) {
    if (describeOwn(g, name) === undefined) continue;
    lock(g, name);
    freeze(g[name]);
  }
  for (const proto of [Object.prototype, Array.prototype, Function.prototype]) preventExtensions(proto);

  const watched = [Object, Array, Function, String, Number, Boolean, Symbol, Map, Set, Promise, RegExp, Error, Date];
  const snapshot = watched.map((type) => {
    const proto = type.prototype;
    return { name: type.name, proto, props: ownKeys(proto).map((key) => [key, describeOwn(proto, key)]) };
  });

  function replaced() {
    for (const { name, proto, props } of snapshot) {
      for (const [key, before] of props) {
        const now = describeOwn(proto, key);
        if (!now || !is(now.value, before.value) || !is(now.get, before.get) || !is(now.set, before.set)) {
          return name + '.prototype.' + String(key);
        }
      }
    }
    return null;
  }

  function check() {
    const what = replaced();
    if (what !== null) {
      throw new ErrorType(
        'aca: ' + what + ' was replaced while the tests ran; assertions cannot be trusted, so the test failed',
      );
    }
  }

  g.afterEach(check);
  g.afterAll(check);
})();
`;
