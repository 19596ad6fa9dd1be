/**
 * Runs the Jest unit tests of the workflow code under Mocha, for StrykerJS's Mocha runner
 * (stryker.config.json): one process takes mutant after mutant in milliseconds, where the Jest
 * runner starts Jest anew for each mutant (minutes per hundred on this machine). Provides what
 * those files use of Jest: test, test.each, expect, beforeAll, afterAll, and jest.mock of `@temporalio/workflow`,
 * which every import here resolves to the workflow fake. TypeScript is compiled by tsx/cjs,
 * required before this file.
 */
import Module from 'node:module';
import * as path from 'node:path';
import * as util from 'node:util';
import { expect } from 'expect';

type Resolve = (request: string, ...rest: unknown[]) => string;
const moduleWithResolve = Module as unknown as { _resolveFilename: Resolve };
const fake = path.resolve(__dirname, '../helpers/workflow-fake.ts');
const resolve = moduleWithResolve._resolveFilename;
moduleWithResolve._resolveFilename = function (this: unknown, request, ...rest) {
  return resolve.call(this, request === '@temporalio/workflow' ? fake : request, ...rest);
};

type Body = (...args: unknown[]) => unknown;
const it = (name: string, fn: Body) =>
  (globalThis as unknown as { it: (n: string, f: Body) => void }).it(name, fn);
const test = Object.assign((name: string, fn: Body) => it(name, fn), {
  each:
    (rows: unknown[][]) =>
    (name: string, fn: Body): void => {
      for (const row of rows) {
        const shown = row.map((v) => (v instanceof Error ? v.message : v));
        it(util.format(name, ...shown), () => fn(...row));
      }
    },
});

const mochaHook = (name: 'before' | 'after') => (fn: Body) =>
  (globalThis as unknown as Record<string, (f: Body) => void>)[name]!(fn);

Object.assign(globalThis, {
  expect,
  test,
  beforeAll: mochaHook('before'),
  afterAll: mochaHook('after'),
  jest: { mock: () => undefined, requireActual: Module.createRequire(__filename) },
});
