// Part of the Jest acceptance verdict (verdicts/jest-verdict-runner.ts), written into the runner
// folder as aca-verdict-acceptance-modules.js (launch/runner-files.ts) and mounted read-only in the
// sandbox; the test framework (verdict-test-framework.cjs) applies it to each test file's runtime.
//
// A module given with the acceptance tests (their data, their helpers) is one object in the test
// file's module registry, shared with the code under test, which could rewrite what the tests
// expect (`cases.json`) or mock it (`jest.doMock`). Whoever requires it gets the module itself,
// never a mock, its data frozen as it first loads.
'use strict';
const fs = require('fs');

const apply = Reflect.apply;

/** Objects and arrays reachable from `value`, frozen; functions and what they hold are left alone. */
function deepFreeze(value) {
  const stack = [value];
  const seen = new Set();
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object' || seen.has(v)) continue;
    seen.add(v);
    for (const key of Reflect.ownKeys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, key);
      if (d && 'value' in d) stack.push(d.value);
    }
    Object.freeze(v);
  }
  return value;
}

/**
 * The files and folders mounted read-only, read as this module loads: in the sandbox, the files
 * given with the acceptance tests are their originals mounted read-only over the workspace's
 * copies (and the dependency folders are mounted read-only). Empty without a sandbox.
 */
const readOnlyMounts = (() => {
  const found = new Set();
  let text = '';
  try {
    text = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch (err) {
    return found;
  }
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    if (fields.length < 6 || !fields[5].split(',').includes('ro')) continue;
    found.add(fields[4].replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8))));
  }
  return found;
})();

/** A file given with the acceptance tests: in the workspace, outside any node_modules, mounted read-only. */
function acceptanceFile(file, rootDir) {
  return (
    typeof file === 'string' &&
    file.startsWith(`${rootDir}/`) &&
    !file.includes('/node_modules/') &&
    readOnlyMounts.has(file)
  );
}

/** Every require of a file given with the acceptance tests, through Jest's runtime for one test file. */
function guardAcceptanceModules(runtime, rootDir) {
  const own = runtime.requireModuleOrMock;
  const resolution = runtime._resolution;
  if (typeof own !== 'function' || !resolution || typeof resolution.resolveCjs !== 'function') return;
  const loaded = new Map();
  runtime.requireModuleOrMock = function (from, moduleName) {
    let file = null;
    try {
      file = resolution.resolveCjs(from, moduleName);
    } catch (err) {
      file = null;
    }
    if (!acceptanceFile(file, rootDir)) return apply(own, this, [from, moduleName]);
    if (!loaded.has(file)) loaded.set(file, deepFreeze(runtime.requireActual(from, moduleName)));
    return loaded.get(file);
  };
}

module.exports = guardAcceptanceModules;
