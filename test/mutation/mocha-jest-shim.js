/**
 * Runs the Jest unit tests of the workflow code under Mocha, for StrykerJS's Mocha runner
 * (stryker.config.json): one process takes mutant after mutant in milliseconds, where the Jest
 * runner starts Jest anew for each. Provides what those files use of Jest (test, test.each,
 * expect, jest.mock of `@temporalio/workflow`) and compiles TypeScript with tsx.
 */
'use strict';
require('tsx/cjs');
const Module = require('node:module');
const path = require('node:path');
const util = require('node:util');
const { expect } = require('expect');

// jest.mock('@temporalio/workflow', ...) in those files: every import of it gets the fake.
const fake = path.resolve(__dirname, '../helpers/workflow-fake.ts');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolve.call(this, request === '@temporalio/workflow' ? fake : request, ...rest);
};

globalThis.expect = expect;
globalThis.jest = { mock: () => undefined, requireActual: (id) => require(id) };
const test = (name, fn) => globalThis.it(name, fn);
test.each = (rows) => (name, fn) => {
  for (const row of rows) {
    const shown = row.map((v) => (v instanceof Error ? v.message : v));
    globalThis.it(util.format(name, ...shown), () => fn(...row));
  }
};
globalThis.test = test;
