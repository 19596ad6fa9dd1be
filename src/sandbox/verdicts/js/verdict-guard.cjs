// Part of the Jest acceptance verdict (verdicts/jest-verdict-runner.ts), written into the runner
// folder as aca-verdict-guard.js (launch/runner-files.ts) and mounted read-only in the sandbox.
//
// Run by Jest in each test file's global context after the framework is installed and before the
// test file (and so the code under test it imports) is loaded. It makes what the assertions rest
// on impossible to replace from then on:
// - the framework's globals (`test`, `it`, `describe`, `expect`, hooks and their `.skip`, `.each`,
//   `.only`… members) can be neither reassigned nor redefined;
// - `expect`'s built-in matchers cannot be overridden through `expect.extend`, nor custom
//   equality testers added (each would let any value equal any other), and each refuses a value
//   under test that holds a Proxy or an `asymmetricMatch` of its own;
// - the static members of the intrinsics the matchers call (`Object.is`, `Object.keys`,
//   `Array.isArray`, `Reflect`, `Symbol.for`, …) and their global names are fixed;
// - `Object.prototype`, `Array.prototype` and `Function.prototype` take no new properties (a
//   property such as `asymmetricMatch` there would make every value match);
// - Jest's list of event handlers is frozen, and the globals that name it and Jest's state are
//   fixed, with the methods Jest walks that list and awaits each test with;
// - the values an assertion compares the value under test with are held to the same rule, and may
//   not be a class that decides for itself what is an instance of it (`Symbol.hasInstance`);
// - the functions of `node:assert` are fixed;
// and after each test and at the end of the file it checks that no existing property of the
// built-in prototypes was replaced, failing the test when one was. Code that assigns to a frozen
// member fails where it does so (a TypeError in strict code; ignored in sloppy code).
'use strict';
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
      defineProperty(target, key, {
        value: d.value,
        writable: false,
        enumerable: d.enumerable,
        configurable: false,
      });
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
  const framework = [
    'test',
    'it',
    'describe',
    'xit',
    'xtest',
    'xdescribe',
    'fit',
    'fdescribe',
    'beforeAll',
    'beforeEach',
    'afterAll',
    'afterEach',
    'expect',
  ];
  for (const name of framework) {
    if (describeOwn(g, name) === undefined) continue;
    lock(g, name);
    lockTree(g[name], 5, seen);
  }

  // Jest announces every test event by calling each handler of one list in turn, with the state
  // its global names; aca's environment is one of the handlers. The list is frozen and the globals
  // that name it, the state, the matchers and the retry setter are fixed, so no handler can be
  // wrapped, replaced, removed or added, nor another state or set of matchers handed round, from
  // here on. The paths by which Jest walks the list and awaits each test (an array's iterator,
  // Promise's `then`, a function's `call`) are fixed with them: ordinary code never replaces them.
  const handlers = g[Symbol.for('EVENT_HANDLERS')];
  if (Array.isArray(handlers)) freeze(handlers);
  for (const name of [
    'EVENT_HANDLERS',
    'JEST_STATE_SYMBOL',
    '$$jest-matchers-object',
    'RETRY_TIMES_SETTER',
  ]) {
    lock(g, Symbol.for(name));
  }
  const arrayIterator = Object.getPrototypeOf([][Symbol.iterator]());
  for (const [target, key] of [
    [Array.prototype, Symbol.iterator],
    [arrayIterator, 'next'],
    [Promise.prototype, 'then'],
    [Promise.prototype, 'catch'],
    [Promise.prototype, 'finally'],
    [Promise.prototype, 'constructor'],
    [Function.prototype, 'call'],
    [Function.prototype, 'apply'],
    [Function.prototype, 'bind'],
  ]) {
    lock(target, key);
  }

  // A value under test that carries an asymmetricMatch of its own would be asked by the equality
  // matchers whether it equals what was expected, and could say yes to anything; a Proxy could
  // show the matchers one thing and the test another. Neither passes an assertion.
  const isProxy = require('util').types.isProxy;
  const builtinAsymmetric = new Set();
  try {
    const e = g.expect;
    for (const m of [
      e.anything(),
      e.any(Number),
      e.arrayContaining([]),
      e.objectContaining({}),
      e.stringContaining(''),
      e.stringMatching('x'),
      e.closeTo(0),
      e.not.arrayContaining([]),
    ]) {
      builtinAsymmetric.add(m.asymmetricMatch);
    }
  } catch (err) {
    // An expect without these matchers: every asymmetricMatch on a received value is foreign.
  }
  // `instanceof` asks the class on its right, which may answer yes to anything through a
  // `Symbol.hasInstance` of its own; the only trusted answer is the one every function inherits
  // from Function.prototype (this context's, or the worker's for its classes such as Buffer).
  const getPrototypeOf = Object.getPrototypeOf;
  const hasInstance = Symbol.hasInstance;
  const functionPrototypes = new Set([Function.prototype, getPrototypeOf(require)]);
  function decidesInstances(fn) {
    for (let o = fn; o !== null; o = getPrototypeOf(o)) {
      if (isProxy(o)) return true;
      if (describeOwn(o, hasInstance)) return !functionPrototypes.has(o);
    }
    return false;
  }

  function impostor(value, classesToo) {
    const stack = [[value, 0]];
    const visited = new Set();
    let budget = 10000;
    while (stack.length > 0 && budget-- > 0) {
      const [v, depth] = stack.pop();
      if (v === null || (typeof v !== 'object' && typeof v !== 'function') || visited.has(v)) continue;
      visited.add(v);
      if (isProxy(v)) return 'a Proxy';
      if (classesToo && typeof v === 'function' && decidesInstances(v)) {
        return 'a class that decides for itself what is an instance of it';
      }
      const match =
        describeOwn(v, 'asymmetricMatch') ||
        (typeof v === 'object' ? { value: v.asymmetricMatch } : undefined);
      if (
        match &&
        (match.get || match.set || (typeof match.value === 'function' && !builtinAsymmetric.has(match.value)))
      ) {
        return 'a value with an asymmetricMatch of its own';
      }
      if (depth >= 6) continue;
      if (v instanceof Map || v instanceof Set) {
        for (const entry of v) stack.push([entry, depth + 1]);
        continue;
      }
      for (const key of ownKeys(v)) {
        const d = describeOwn(v, key);
        if (d && 'value' in d) stack.push([d.value, depth + 1]);
      }
    }
    return null;
  }

  const internalFlag = Symbol.for('$$jest-internal-matcher');
  const matchersObject = g[Symbol.for('$$jest-matchers-object')];
  if (matchersObject && typeof matchersObject === 'object') {
    const matchers = matchersObject.matchers;
    for (const key of ownKeys(matchers || {})) {
      const original = matchers[key];
      if (typeof original !== 'function') continue;
      // What the value is compared with is checked as well: a test may put the value under test
      // on either side (`expect(5).toEqual(add(2, 3))`), or compare it with a class of the code
      // under test (`toBeInstanceOf`, `toThrow`, `expect.any`).
      const checked = function (received, ...rest) {
        const found = impostor(received, false);
        if (found !== null) {
          throw new ErrorType('aca: the value under test is ' + found + ', which an assertion cannot trust');
        }
        for (let i = 0; i < rest.length; i += 1) {
          const other = impostor(rest[i], true);
          if (other !== null) {
            throw new ErrorType(
              'aca: the value an assertion compares with is ' + other + ', which it cannot trust',
            );
          }
        }
        return original.call(this, received, ...rest);
      };
      if (original[internalFlag] === true) defineProperty(checked, internalFlag, { value: true });
      matchers[key] = checked;
    }
    lock(matchersObject, 'matchers');
    lock(matchersObject, 'customEqualityTesters');
    if (matchers) for (const key of ownKeys(matchers)) lock(matchers, key);
    if (Array.isArray(matchersObject.customEqualityTesters)) freeze(matchersObject.customEqualityTesters);
  }

  const intrinsics = [
    'Object',
    'Array',
    'Reflect',
    'JSON',
    'Math',
    'Number',
    'String',
    'Symbol',
    'Boolean',
    'Map',
    'Set',
    'WeakMap',
    'WeakSet',
    'Promise',
    'Function',
    'BigInt',
  ];
  // Existing members are fixed; new ones may still be added, as polyfills and libraries such as
  // reflect-metadata or symbol-observable do (Reflect.defineMetadata, Symbol.observable).
  for (const name of intrinsics) {
    if (describeOwn(g, name) === undefined) continue;
    lock(g, name);
    for (const key of ownKeys(g[name])) lock(g[name], key);
  }
  for (const proto of [Object.prototype, Array.prototype, Function.prototype]) preventExtensions(proto);

  // node:assert (and util.isDeepStrictEqual) are one module object for the whole worker, shared by
  // the test file and the code under test: their functions are fixed, so that a test written with
  // them cannot be emptied.
  const assertModule = require('assert');
  for (const target of [assertModule, assertModule.strict]) {
    for (const key of ownKeys(target)) lock(target, key);
  }
  lock(require('util'), 'isDeepStrictEqual');

  const watched = [
    Object,
    Array,
    Function,
    String,
    Number,
    Boolean,
    Symbol,
    Map,
    Set,
    Promise,
    RegExp,
    Error,
    Date,
  ];
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
        'aca: ' +
          what +
          ' was replaced while the tests ran; assertions cannot be trusted, so the test failed',
      );
    }
  }

  g.afterEach(check);
  g.afterAll(check);
})();
