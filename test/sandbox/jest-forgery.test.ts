/**
 * The Jest acceptance verdict: legitimate acceptance files in every common form give honest
 * results (skipped and todo tests are neither tampering nor failures), and a solution module that
 * forges a pass from inside the test process does not get one. Each forgery comes from the
 * solution module alone, with the user's acceptance test in place and `add` still broken.
 *
 * The `it.skip`, `xit`, `describe.skip`, `.only` and failing `expect`s below are inside template
 * strings: they are the acceptance files under test (what the honest-skip rule must accept), run
 * in the sandbox, never tests of this suite.
 *
 * Each case is one or two verdict runs of its own, with nothing shared between cases but the
 * read-only runner, so the cases run concurrently (two at a time, jest.config.js's
 * maxConcurrency): a verdict run spends part of its time starting processes and waiting on them,
 * which the other case's run fills. No case has per-test hooks that concurrency would misplace.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTestSuite } from '../../src/sandbox';
import type { TestRunReport } from '../../src/shared/types';
import { makeWorkspace, removeWorkspaces } from '../helpers/workspace-fixture';

const succeeded = (r: TestRunReport): boolean =>
  r.outcome === 'completed' && r.passRate >= 1 && r.failed === 0 && r.errors === 0 && r.passed > 0;

afterAll(() => removeWorkspaces());

/** A workspace as prepareWorkspace leaves it: read-only acceptance copies, originals in a folder of their own. */
async function runWithAcceptance(
  acceptance: Record<string, string>,
  solution: Record<string, string>,
): Promise<TestRunReport> {
  const sourceDir = makeWorkspace(acceptance);
  const ws = makeWorkspace({ ...acceptance, ...solution });
  for (const file of Object.keys(acceptance)) fs.chmodSync(path.join(ws, file), 0o444);
  return runTestSuite({
    workspace: ws,
    language: 'typescript',
    mode: 'bwrap',
    acceptance: { sourceDir, files: Object.keys(acceptance) },
  });
}

const statusOf = (report: TestRunReport, name: string): string | undefined =>
  report.cases.find((c) => c.name.endsWith(`::${name}`))?.status;

describe('skipped and todo acceptance tests are honest results', () => {
  const ACCEPTANCE = `import { add } from './add';

describe('add', () => {
  it('adds', () => {
    expect(add(2, 3)).toBe(5);
  });
  it.skip('adds big numbers', () => {
    expect(add(2 ** 53, 1)).toBe(2 ** 53 + 1);
  });
  test.todo('adds strings');
});
`;

  test.concurrent(
    'a correct solution succeeds, with the skipped and todo tests counted as skipped',
    async () => {
      const report = await runWithAcceptance(
        { 'add.test.ts': ACCEPTANCE },
        { 'add.ts': 'export const add = (a: number, b: number): number => a + b;\n' },
      );
      expect(report.message ?? '').not.toMatch(/tampered/);
      expect(succeeded(report)).toBe(true);
      expect(report).toMatchObject({ passed: 1, skipped: 2, failed: 0, errors: 0 });
      expect(statusOf(report, 'add adds big numbers')).toBe('skipped');
      expect(statusOf(report, 'add adds strings')).toBe('skipped');
    },
  );

  test.concurrent('a wrong solution fails on the test that runs', async () => {
    const report = await runWithAcceptance(
      { 'add.test.ts': ACCEPTANCE },
      { 'add.ts': 'export const add = (a: number, b: number): number => a - b;\n' },
    );
    expect(report.outcome).toBe('completed');
    expect(succeeded(report)).toBe(false);
    expect(statusOf(report, 'add adds')).toBe('failed');
  });
});

describe('forged passes from the solution module', () => {
  const ACCEPTANCE = `import { add } from './add';

describe('add', () => {
  it('adds', () => {
    expect(add(2, 3)).toBe(5);
  });
  test('adds negatives', () => {
    expect(add(-1, -1)).toEqual(-2);
  });
});
`;
  const forge = async (solution: string): Promise<TestRunReport> => {
    const report = await runWithAcceptance({ 'add.test.ts': ACCEPTANCE }, { 'add.ts': solution });
    expect(succeeded(report)).toBe(false);
    expect(report.passed).toBe(0);
    return report;
  };

  test.concurrent('test and it replaced by wrappers that register empty bodies', async () => {
    await forge(`const g = globalThis as any;
for (const name of ['test', 'it']) {
  const real = g[name];
  const fake = (title: string, _fn: unknown) => real(title, () => {});
  Object.assign(fake, real);
  g[name] = fake;
}
export const add = (a: number, b: number): number => a - b;
`);
  });

  test.concurrent('expect replaced by a proxy that accepts everything', async () => {
    await forge(`const g = globalThis as any;
const chain = new Set(['not', 'resolves', 'rejects']);
const matchers: any = new Proxy(
  {},
  { get: (_t, key) => (typeof key === 'symbol' ? undefined : chain.has(key) ? matchers : () => undefined) },
);
g.expect = Object.assign((_actual: unknown) => matchers, g.expect);
export const add = (a: number, b: number): number => a - b;
`);
  });

  test.concurrent('Object.is made to call everything equal', async () => {
    await forge(`Object.is = () => true;
export const add = (a: number, b: number): number => a - b;
`);
  });

  test.concurrent('pass records written to fd 3, then exit 0', async () => {
    await forge(`import * as fs from 'fs';
const file = require.resolve('./add.test.ts').replace(/[^/]*$/, '') + 'add.test.ts';
for (const name of ['add adds', 'add adds negatives']) {
  fs.writeSync(3, JSON.stringify({ t: 'case', file, name, status: 'passed' }) + '\\n');
}
fs.writeSync(3, JSON.stringify({ t: 'done', success: true }) + '\\n');
const out = process.argv.find((a) => a.startsWith('--outputFile='))?.split('=')[1];
if (out) {
  fs.writeFileSync(out, JSON.stringify({
    numRuntimeErrorTestSuites: 0,
    testResults: [{ name: file, status: 'passed', message: '', assertionResults: [
      { fullName: 'add adds', status: 'passed', failureMessages: [] },
      { fullName: 'add adds negatives', status: 'passed', failureMessages: [] },
    ] }],
  }));
}
process.exit(0);
export const add = (a: number, b: number): number => a - b;
`);
  });
});

test.concurrent(
  'a skip made by the code under test is not honest: the failing tests skipped through Jest state',
  async () => {
    const acceptance = `import { add } from './add';

test('adds zero', () => {
  expect(add(0, 0)).toBe(0);
});
test('adds', () => {
  expect(add(2, 3)).toBe(5);
});
test('adds negatives', () => {
  expect(add(-1, -1)).toBe(-2);
});
`;
    const report = await runWithAcceptance(
      { 'add.test.ts': acceptance },
      {
        'add.ts': `const g = globalThis as any;
const key = Object.getOwnPropertySymbols(g).find((s) => String(s).includes('JEST_STATE'));
g.beforeAll(() => {
  const visit = (block: any) => {
    for (const child of block.children) {
      if (child.type === 'test' && child.name !== 'adds zero') child.mode = 'skip';
      else if (child.type === 'describeBlock') visit(child);
    }
  };
  if (key) visit(g[key].rootDescribeBlock);
});
export const add = (a: number, b: number): number => a - b;
`,
      },
    );
    expect(succeeded(report)).toBe(false);
    expect(statusOf(report, 'adds zero')).toBe('passed');
    expect(statusOf(report, 'adds')).toBe('error');
  },
);

describe('legitimate acceptance files in every common form give honest verdicts', () => {
  const CALC_TEST = `import { add, divide, total, stats, delayed, legacy, ParseError } from './calc';

describe('calc', () => {
  describe('add', () => {
    it('adds', () => {
      expect(add(2, 3)).toBe(5);
    });
    it.each([
      [1, 1, 2],
      [2, 2, 4],
      [-1, 1, 0],
    ])('add(%i, %i) = %i', (a, b, sum) => {
      expect(add(a, b)).toBe(sum);
    });
    test.each\`
      a    | b     | sum
      \${0} | \${0}  | \${0}
      \${5} | \${-2} | \${3}
    \`('$a + $b is $sum', ({ a, b, sum }) => {
      expect(add(a, b)).toEqual(sum);
    });
    it.skip('adds bigints', () => {
      expect(add(2, 3)).toBe(6);
    });
    xit('adds strings', () => {
      expect(add(1, 1)).toBe(3);
    });
    test.todo('adds matrices');
    it.skip.each([[1, 2]])('skipped each %i %i', (a, b) => {
      expect(add(a, b)).toBe(0);
    });
  });

  describe('divide', () => {
    test('divides', () => {
      expect(divide(6, 3)).toBeCloseTo(2);
    });
    test('refuses zero', () => {
      expect(() => divide(1, 0)).toThrow('division by zero');
    });
  });

  describe.skip('future', () => {
    it('does more', () => {
      expect(true).toBe(false);
    });
  });
  xdescribe('later', () => {
    test('never', () => {
      expect(1).toBe(2);
    });
  });

  describe('async', () => {
    it('totals', async () => {
      await expect(total([1, 2, 3])).resolves.toBe(6);
    });
    it('rejects empty', () => expect(total([])).rejects.toThrow('empty'));
    it('waits with fake timers', async () => {
      jest.useFakeTimers();
      const later = delayed(5);
      jest.advanceTimersByTime(1000);
      await expect(later).resolves.toBe(5);
      jest.useRealTimers();
    });
    test.concurrent('runs concurrently', async () => {
      expect(await total([2])).toBe(2);
    });
  });

  it('keeps ordinary load-time code working', () => {
    expect(String(legacy)).toBe('legacy');
    expect(() => {
      throw new ParseError('bad');
    }).toThrow(ParseError);
  });

  it('summarises', () => {
    expect(stats([1, 2, 3])).toEqual({ min: 1, max: 3, mean: 2 });
    expect(new Map([[1, stats([1])]])).toEqual(new Map([[1, { min: 1, max: 1, mean: 1 }]]));
    expect([stats([4])]).toContainEqual(expect.objectContaining({ mean: 4 }));
  });
});

expect.extend({
  toBeEven(received: number) {
    return { pass: received % 2 === 0, message: () => \`\${received} is not even\` };
  },
});

test('custom matcher', () => {
  (expect(add(1, 1)) as unknown as { toBeEven(): void }).toBeEven();
});
`;
  const FOCUS_TEST = `import { describe, expect, it, jest, test } from '@jest/globals';
import { add } from './calc';

describe('focused', () => {
  it.only('adds', () => {
    expect(add(1, 2)).toBe(3);
  });
  it('is left out by only', () => {
    expect(add(1, 2)).toBe(4);
  });
  test.only.each([[2, 2, 4]])('adds %i and %i', (a, b, sum) => {
    expect(add(a, b)).toBe(sum);
  });
  it.only('calls back', () => {
    const callback = jest.fn();
    callback(add(1, 1));
    expect(callback).toHaveBeenCalledWith(2);
  });
});
`;
  const solution = (
    addBody: string,
  ): string => `export const add = (a: number, b: number): number => ${addBody};
export function divide(a: number, b: number): number {
  if (b === 0) throw new Error('division by zero');
  return a / b;
}
export async function total(values: number[]): Promise<number> {
  if (values.length === 0) throw new Error('empty');
  return values.reduce((s, v) => s + v, 0);
}
export const stats = (values: number[]) => ({
  min: Math.min(...values),
  max: Math.max(...values),
  mean: values.reduce((s, v) => s + v, 0) / values.length,
});
// What ordinary code and libraries do at load time must keep working under the verdict's guard.
(Symbol as unknown as Record<string, symbol>).observable ??= Symbol('observable');
(Reflect as unknown as Record<string, unknown>).defineMetadata ??= () => undefined;
export class ParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ParseError';
  }
}
function Legacy(this: unknown) {}
Legacy.prototype.toString = function () {
  return 'legacy';
};
export const legacy = new (Legacy as unknown as new () => object)();
export const delayed = <T>(value: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(value), 500));
`;
  const acceptance = { 'test/calc.test.ts': CALC_TEST, 'test/focus.test.ts': FOCUS_TEST };
  const withSolution = (addBody: string) => ({ 'test/calc.ts': solution(addBody) });

  test.concurrent('a correct solution succeeds, every test counted', async () => {
    const report = await runWithAcceptance(acceptance, withSolution('a + b'));
    expect(report.message ?? '').not.toMatch(/tampered|must run/);
    expect(succeeded(report)).toBe(true);
    // calc: 15 run and pass, 6 skipped or todo; focus: 3 run and pass, 1 left out by .only.
    expect(report).toMatchObject({ passed: 18, skipped: 7, failed: 0, errors: 0 });
    expect(statusOf(report, 'calc future does more')).toBe('skipped');
    expect(statusOf(report, 'calc add skipped each 1 2')).toBe('skipped');
    expect(statusOf(report, 'focused is left out by only')).toBe('skipped');
    expect(statusOf(report, 'calc async runs concurrently')).toBe('passed');
  });

  test.concurrent('a wrong solution fails, on the tests that check what it got wrong', async () => {
    const report = await runWithAcceptance(acceptance, withSolution('a - b'));
    expect(report.outcome).toBe('completed');
    expect(succeeded(report)).toBe(false);
    expect(statusOf(report, 'calc add adds')).toBe('failed');
    expect(statusOf(report, 'focused adds')).toBe('failed');
    expect(statusOf(report, 'calc divide divides')).toBe('passed');
    expect(statusOf(report, 'calc add adds bigints')).toBe('skipped');
  });
});

test.concurrent(
  'test functions of every form, classes and snapshots keep their honest verdicts',
  async () => {
    const acceptance = `import { add, Point, later } from './add';

describe.each([
  [1, 2, 3],
  [2, 3, 5],
])('add(%i, %i)', (a, b, sum) => {
  test(\`is \${sum}\`, () => {
    expect(add(a, b)).toBe(sum);
  });
});

describe('forms', () => {
  test('class instances compare by value', () => {
    expect(new Point(add(1, 1), 3)).toEqual(new Point(2, 3));
    expect(new Point(1, 2)).toStrictEqual(new Point(1, 2));
    expect(new Point(1, 2)).toBeInstanceOf(Point);
    expect(Buffer.from([add(1, 1)])).toBeInstanceOf(Buffer);
    expect([new Point(add(0, 1), 1)]).toEqual([expect.any(Point)]);
  });
  test('done callback', (done) => {
    later(add(1, 2)).then((v) => {
      try {
        expect(v).toBe(3);
        done();
      } catch (error) {
        done(error);
      }
    });
  });
  test('async with jest.fn', async () => {
    const spy = jest.fn((x: number) => add(x, 1));
    expect(await later(spy(1))).toBe(2);
    expect(spy).toHaveBeenCalledTimes(1);
  });
  test.failing('a failing test that fails', () => {
    expect(add(1, 1)).toBe(3);
  });
  test('an inline snapshot', () => {
    expect({ sum: add(2, 2) }).toMatchInlineSnapshot(\`
{
  "sum": 4,
}
\`);
  });
  test('throws a class of the solution', () => {
    expect(() => new Point(NaN, 0)).toThrow(RangeError);
  });
});
`;
    const solution = (body: string): string => `export const add = (a: number, b: number): number => ${body};
export class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {
    if (Number.isNaN(x)) throw new RangeError('x');
  }
}
export const later = <T>(v: T): Promise<T> => new Promise((r) => setTimeout(() => r(v), 10));
`;
    const right = await runWithAcceptance({ 'add.test.ts': acceptance }, { 'add.ts': solution('a + b') });
    expect(right.message ?? '').not.toMatch(/tampered|must run/);
    expect(succeeded(right)).toBe(true);
    expect(right).toMatchObject({ passed: 8, failed: 0, errors: 0 });

    const wrong = await runWithAcceptance({ 'add.test.ts': acceptance }, { 'add.ts': solution('a - b') });
    expect(succeeded(wrong)).toBe(false);
    for (const name of [
      'add(1, 2) is 3',
      'add(2, 3) is 5',
      'forms done callback',
      'forms an inline snapshot',
    ]) {
      expect([name, statusOf(wrong, name)]).toEqual([name, 'failed']);
    }
    // add(1, 1) is still not 3: the test marked failing fails, as it should.
    expect(statusOf(wrong, 'forms a failing test that fails')).toBe('passed');
  },
);

describe('forged passes through Jest itself, from the solution module', () => {
  const ACCEPTANCE = `import { add } from './add';

test('adds', () => {
  expect(add(2, 3)).toEqual(5);
});
test('adds negatives', () => {
  expect(add(-1, -1)).toEqual(-2);
});
`;
  const STATE = `const g = globalThis as any;
const key = Object.getOwnPropertySymbols(g).find((s) => String(s).includes('JEST_STATE'));
const tests = (block: any): any[] =>
  block.children.flatMap((c: any) => (c.type === 'test' ? [c] : tests(c)));
`;
  const forge = async (solution: string): Promise<TestRunReport> => {
    const report = await runWithAcceptance({ 'add.test.ts': ACCEPTANCE }, { 'add.ts': solution });
    expect(succeeded(report)).toBe(false);
    expect(report.passed).toBe(0);
    return report;
  };

  test.concurrent("each test's function replaced in Jest's state before it runs", async () => {
    await forge(`${STATE}
g.beforeAll(() => {
  for (const t of tests(g[key].rootDescribeBlock)) {
    try {
      t.fn = () => {};
    } catch {
      Object.defineProperty(t, 'fn', { get: () => () => {} });
    }
  }
});
export const add = (a: number, b: number): number => a - b;
`);
  });

  test.concurrent("each failure removed from Jest's state after the test ran", async () => {
    await forge(`${STATE}
g.afterEach(() => {
  const t = g[key].currentlyRunningTest;
  if (t) t.errors.length = 0;
});
export const add = (a: number, b: number): number => a - b;
`);
  });

  test.concurrent("every circus event handler wrapped so none hears a test's failure", async () => {
    await forge(`const handlers: any[] = (globalThis as any)[Symbol.for('EVENT_HANDLERS')];
for (let i = 0; i < handlers.length; i++) {
  const handler = handlers[i];
  handlers[i] = (event: any, state: any) =>
    event.name === 'test_fn_failure' ? undefined : handler(event, state);
}
export const add = (a: number, b: number): number => a - b;
`);
  });

  test.concurrent(
    "the worker's own Function.prototype.call made to skip each test, from outside the tests' context",
    async () => {
      await forge(`const OuterFunction = (require as any).constructor;
const call = OuterFunction.prototype.call;
// Jest calls each test's function with a context object of no prototype: such calls return at once.
OuterFunction.prototype.call = function (this: any, self: any, ...args: any[]) {
  if (self && typeof self === 'object' && Object.getPrototypeOf(self) === null) return undefined;
  return Reflect.apply(call, this, [self, ...args]);
};
export const add = (a: number, b: number): number => a - b;
`);
    },
  );

  test.concurrent('a result that claims to match whatever it is compared with', async () => {
    await forge(`export const add = (_a: number, _b: number): any => ({ asymmetricMatch: () => true });
`);
  });
});

describe("forged answers to Jest's main process, from the solution module", () => {
  const ACCEPTANCE = `import { add } from './add';

test('adds', () => {
  expect(add(2, 3)).toEqual(5);
});
test('adds negatives', () => {
  expect(add(-1, -1)).toEqual(-2);
});
`;
  // A whole test file result that says both tests passed, in the shape Jest's main process takes
  // from its worker; the worker's own process object is reached through an outer-context function.
  const RESULT = `const file = __filename.replace(/add\\.ts$/, 'add.test.ts');
const now = Date.now();
const passed = (title: string) => ({
  ancestorTitles: [], duration: 1, failureDetails: [], failureMessages: [], fullName: title,
  invocations: 1, location: null, numPassingAsserts: 1, retryReasons: [], status: 'passed', title,
});
const result = {
  failureMessage: null, leaks: false, numFailingTests: 0, numPassingTests: 2, numPendingTests: 0,
  numTodoTests: 0, openHandles: [],
  perfStats: { end: now, loadTestEnvironmentEnd: now, loadTestEnvironmentStart: now, runtime: 1,
    setupAfterEnvEnd: now, setupAfterEnvStart: now, setupFilesEnd: now, setupFilesStart: now,
    slow: false, start: now },
  skipped: false,
  snapshot: { added: 0, fileDeleted: false, matched: 0, unchecked: 0, uncheckedKeys: [], unmatched: 0, updated: 0 },
  testFilePath: file,
  testResults: [passed('adds'), passed('adds negatives')],
};
const real = (require as any).constructor('return process')();
`;
  const forge = async (solution: string): Promise<TestRunReport> => {
    const report = await runWithAcceptance(
      { 'add.test.ts': ACCEPTANCE },
      { 'add.ts': `${RESULT}${solution}\nexport const add = (a: number, b: number): number => a - b;\n` },
    );
    expect(succeeded(report)).toBe(false);
    expect(report.passed).toBe(0);
    return report;
  };

  test.concurrent("a passing result sent with the worker's process.send before the real one", async () => {
    await forge(`if (typeof real.send === 'function') real.send([0, result]);`);
  });

  test.concurrent("a passing result written as jest-worker's message on the worker's fd 3", async () => {
    await forge(`if (typeof real.send === 'function') {
  require('fs').writeSync(3, JSON.stringify([0, result]) + '\\n');
}`);
  });

  test.concurrent(
    "a passing result announced to the main process's listeners as a message of the worker's",
    async () => {
      await forge(`if (typeof real.send === 'function') {
  const test = { path: file, duration: 0, context: { config: { rootDir: '/', id: 'x', displayName: undefined } } };
  real.send([3, ['test-file-success', [test, result]]]);
}`);
    },
  );
});

describe('forged passes through what an assertion compares with, from the solution module', () => {
  const forge = async (acceptance: string, solution: string): Promise<TestRunReport> => {
    const report = await runWithAcceptance({ 'add.test.ts': acceptance }, { 'add.ts': solution });
    expect(succeeded(report)).toBe(false);
    expect(report.passed).toBe(0);
    return report;
  };

  test.concurrent('a result that matches anything, on the expected side of the assertion', async () => {
    const report = await forge(
      `import { add } from './add';

test('adds', () => {
  expect(5).toEqual(add(2, 3));
});
test('adds negatives', () => {
  expect(-2).toStrictEqual(add(-1, -1));
});
`,
      `export const add = (_a: number, _b: number): any => ({ asymmetricMatch: () => true });\n`,
    );
    expect(report.output).toContain(
      'the value an assertion compares with is a value with an asymmetricMatch',
    );
  });

  test.concurrent('a class of the solution that calls every value its instance', async () => {
    const report = await forge(
      `import { add, Sum } from './add';

test('adds', () => {
  expect(add(2, 3)).toBeInstanceOf(Sum);
});
test('adds negatives', () => {
  expect(add(-1, -1)).toEqual(expect.any(Sum));
});
`,
      `export class Sum {
  static [Symbol.hasInstance](): boolean {
    return true;
  }
}
export const add = (a: number, b: number): unknown => a - b;
`,
    );
    expect(report.output).toContain('a class that decides for itself what is an instance of it');
  });

  test.concurrent("node:assert's functions emptied", async () => {
    await forge(
      `import assert from 'node:assert/strict';
import { add } from './add';

test('adds', () => {
  assert.strictEqual(add(2, 3), 5);
});
test('adds negatives', () => {
  assert.deepStrictEqual({ sum: add(-1, -1) }, { sum: -2 });
});
`,
      `import * as assert from 'node:assert';
for (const name of ['strictEqual', 'deepStrictEqual', 'equal', 'deepEqual', 'ok']) {
  try {
    (assert as any)[name] = () => undefined;
  } catch {}
  try {
    (assert as any).strict[name] = () => undefined;
  } catch {}
}
export const add = (a: number, b: number): number => a - b;
`,
    );
  });

  const ADD_TEST = `import { add } from './add';
import { expect, test } from '@jest/globals';

test('adds', () => {
  expect(add(2, 3)).toEqual(5);
});
test('adds negatives', () => {
  expect(add(-1, -1)).toEqual(-2);
});
`;

  test.concurrent("expect's matchers, equality testers or matcher object replaced", async () => {
    await forge(
      ADD_TEST,
      `const g = globalThis as any;
const yes = () => ({ pass: true, message: () => '' });
try {
  g.expect.extend({ toBe: yes, toEqual: yes, toStrictEqual: yes });
} catch {}
try {
  g.expect.addEqualityTesters([() => true]);
} catch {}
try {
  g[Symbol.for('$$jest-matchers-object')] = { matchers: { toEqual: yes }, state: {}, customEqualityTesters: [] };
} catch {}
export const add = (a: number, b: number): number => a - b;
`,
    );
  });

  test.concurrent(
    "the test's own imports mocked from the solution (jest.doMock of @jest/globals)",
    async () => {
      await forge(
        ADD_TEST,
        `const yes: any = new Proxy(() => yes, { get: (_t, k) => (k === 'then' ? undefined : yes), apply: () => yes });
try {
  jest.doMock('@jest/globals', () => ({ ...jest.requireActual('@jest/globals'), expect: () => yes }));
} catch {}
export const add = (a: number, b: number): number => a - b;
`,
      );
    },
  );

  test.concurrent('Object.prototype and Number.prototype polluted', async () => {
    await forge(
      ADD_TEST,
      `const P = Object.prototype as any;
try {
  Object.defineProperty(P, 'asymmetricMatch', { value: () => true });
} catch {}
try {
  P.hasOwnProperty = () => true;
} catch {}
try {
  (Number.prototype as any).valueOf = () => 5;
} catch {}
export const add = (a: number, b: number): any => Object(a - b);
`,
    );
  });
});

test.concurrent(
  "no debugger opens from the solution module, in Jest's main process or in the worker",
  async () => {
    // From a debugger session on either process, code can read the seal's key or rewrite the
    // verdict. The solution asks for one every way Node offers and notes what it got, in the worker
    // of the verdict run (the only process with a process.send).
    const acceptance = `import { add } from './add';

test('adds', async () => {
  expect(await add(2, 3)).toBe(5);
});
`;
    const solution = `import * as fs from 'fs';
import * as net from 'net';
const real = (require as any).constructor('return process')();
const notes: string[] = [];
const inVerdict = typeof real.send === 'function';
if (inVerdict) {
  for (const pid of [real.ppid, real.pid]) real.kill(pid, 'SIGUSR1');
  for (const p of [process as any, real]) {
    try {
      if (typeof p.binding('inspector').Connection === 'function') notes.push('inspector binding');
    } catch {}
  }
  for (const name of ['inspector', 'inspector/promises']) {
    try {
      new (require(name).Session)().connect();
      notes.push(name + ' session');
    } catch {}
  }
}
const reachable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
export const add = async (a: number, b: number): Promise<number> => {
  if (inVerdict) {
    await new Promise((r) => setTimeout(r, 500));
    if (await reachable(9229)) notes.push('a debugger listening on 9229');
    fs.writeFileSync(__dirname + '/debugger-notes.json', JSON.stringify(notes));
  }
  return a - b;
};
`;
    const sourceDir = makeWorkspace({ 'add.test.ts': acceptance });
    const ws = makeWorkspace({ 'add.test.ts': acceptance, 'add.ts': solution });
    fs.chmodSync(path.join(ws, 'add.test.ts'), 0o444);
    const report = await runTestSuite({
      workspace: ws,
      language: 'typescript',
      mode: 'bwrap',
      acceptance: { sourceDir, files: ['add.test.ts'] },
    });
    expect(succeeded(report)).toBe(false);
    expect(JSON.parse(fs.readFileSync(path.join(ws, 'debugger-notes.json'), 'utf8'))).toEqual([]);
  },
);

describe('the data and helpers given with the acceptance tests', () => {
  const ACCEPTANCE = `import { add } from './add';
import cases from './cases.json';
import { sumOf } from './helpers';

test.each(cases)('add(%i, %i)', (a: number, b: number, sum: number) => {
  expect(add(a, b)).toBe(sum);
});
test('adds a list', () => {
  expect([1, 2, 3].reduce(add, 0)).toBe(sumOf([1, 2, 3]));
});
`;
  const GIVEN = {
    'add.test.ts': ACCEPTANCE,
    'cases.json': '[[2, 3, 5], [1, 1, 2]]\n',
    'helpers.ts': 'export const sumOf = (values: number[]): number => values.reduce((s, v) => s + v, 0);\n',
  };
  const BROKEN = 'export const add = (a: number, b: number): number => a - b;\n';

  test.concurrent('a correct solution passes; a wrong one fails', async () => {
    const right = await runWithAcceptance(GIVEN, {
      'add.ts': 'export const add = (a: number, b: number): number => a + b;\n',
    });
    expect(succeeded(right)).toBe(true);
    expect(right).toMatchObject({ passed: 3, failed: 0, errors: 0 });
    const wrong = await runWithAcceptance(GIVEN, { 'add.ts': BROKEN });
    expect(succeeded(wrong)).toBe(false);
    expect(wrong.passed).toBe(0);
  });

  test.concurrent('the expected values rewritten in the shared JSON module, from the solution', async () => {
    const report = await runWithAcceptance(GIVEN, {
      'add.ts': `try {
  for (const c of require('./cases.json')) c[2] = c[0] - c[1];
} catch {}
try {
  require('./helpers').sumOf = (values: number[]) => values.reduce((s, v) => s - v, 0);
} catch {}
${BROKEN}`,
    });
    expect(succeeded(report)).toBe(false);
    expect(report.passed).toBe(0);
  });

  test.concurrent('the data and helpers mocked from the solution', async () => {
    const report = await runWithAcceptance(GIVEN, {
      'add.ts': `jest.doMock('./cases.json', () => [[2, 3, -1], [1, 1, 0]]);
jest.doMock('./helpers', () => ({ sumOf: (values: number[]) => values.reduce((s, v) => s - v, 0) }));
${BROKEN}`,
    });
    expect(succeeded(report)).toBe(false);
    expect(report.passed).toBe(0);
  });
});
