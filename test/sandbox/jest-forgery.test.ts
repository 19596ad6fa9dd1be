/**
 * The Jest acceptance verdict: legitimate acceptance files in every common form give honest
 * results (skipped and todo tests are neither tampering nor failures), and a solution module that
 * forges a pass from inside the test process does not get one. Each forgery comes from the
 * solution module alone, with the user's acceptance test in place and `add` still broken.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTestSuite } from '../../src/sandbox';
import type { TestRunReport } from '../../src/shared/types';
import { makeWorkspace, removeWorkspaces } from './workspace-fixture';

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

  test('a correct solution succeeds, with the skipped and todo tests counted as skipped', async () => {
    const report = await runWithAcceptance(
      { 'add.test.ts': ACCEPTANCE },
      { 'add.ts': 'export const add = (a: number, b: number): number => a + b;\n' },
    );
    expect(report.message ?? '').not.toMatch(/tampered/);
    expect(succeeded(report)).toBe(true);
    expect(report).toMatchObject({ passed: 1, skipped: 2, failed: 0, errors: 0 });
    expect(statusOf(report, 'add adds big numbers')).toBe('skipped');
    expect(statusOf(report, 'add adds strings')).toBe('skipped');
  });

  test('a wrong solution fails on the test that runs', async () => {
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

  test('test and it replaced by wrappers that register empty bodies', async () => {
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

  test('expect replaced by a proxy that accepts everything', async () => {
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

  test('Object.is made to call everything equal', async () => {
    await forge(`Object.is = () => true;
export const add = (a: number, b: number): number => a - b;
`);
  });

  test('pass records written to fd 3, then exit 0', async () => {
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
