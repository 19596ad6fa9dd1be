import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  DEFAULT_SANDBOX_LIMITS,
  checkSandboxAvailable,
  releaseWorkspace,
  runTestSuite,
} from '../../../src/sandbox';
import { makeWorkspace, removeWorkspaces, snapshotOwners } from '../../helpers/workspace-fixture';

afterAll(removeWorkspaces);

const PASSING_PY = `
def test_one():
    assert 1 + 1 == 2

def test_two():
    assert "a".upper() == "A"

class TestGroup:
    def test_three(self):
        assert [1, 2][-1] == 2
`;

const FAILING_PY = `
import pytest

def test_ok():
    assert True

def test_wrong():
    assert 2 + 2 == 5, "arithmetic is broken"

@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")

def test_uses_broken(broken):
    pass

@pytest.mark.skip(reason="not yet")
def test_later():
    pass
`;

describe('python runner in bwrap', () => {
  test('a passing suite reports passRate 1 with per-test names', async () => {
    const ws = makeWorkspace({ 'test_ok.py': PASSING_PY });
    const before = snapshotOwners(ws);
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
    expect(report.outcome).toBe('completed');
    expect(report.sandbox).toBe('bwrap');
    expect(report.passRate).toBe(1);
    expect(report.passed).toBe(3);
    expect(report.cases.map((c) => c.name).sort()).toEqual([
      'test_ok.py::TestGroup::test_three',
      'test_ok.py::test_one',
      'test_ok.py::test_two',
    ]);
    // The folder is its owner's again at once, the files at the run's end; no report or cache files left behind.
    expect(snapshotOwners(ws)['.']).toBe(before['.']);
    await releaseWorkspace(ws);
    expect(snapshotOwners(ws)).toEqual(before);
  });

  test('a failing suite reports counts and messages', async () => {
    const ws = makeWorkspace({ 'test_fail.py': FAILING_PY });
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
    expect(report.outcome).toBe('completed');
    expect([report.passed, report.failed, report.errors, report.skipped]).toEqual([1, 1, 1, 1]);
    expect(report.passRate).toBeCloseTo(1 / 3);
    const byName = Object.fromEntries(report.cases.map((c) => [c.name, c]));
    expect(byName['test_fail.py::test_wrong'].status).toBe('failed');
    expect(byName['test_fail.py::test_wrong'].message).toContain('arithmetic is broken');
    expect(byName['test_fail.py::test_uses_broken'].status).toBe('error');
    expect(byName['test_fail.py::test_uses_broken'].message).toContain('fixture exploded');
    expect(byName['test_fail.py::test_later'].status).toBe('skipped');
  });

  test('a syntax error is a collection error, never a pass', async () => {
    const ws = makeWorkspace({ 'test_ok.py': PASSING_PY, 'test_broken.py': 'def test_x(:\n    pass\n' });
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
    expect(report.outcome).toBe('collection_error');
    expect(report.errors).toBeGreaterThanOrEqual(1);
    expect(report.passRate).toBe(0);
    expect(report.message).toContain('SyntaxError');
  });

  test('no tests collected is no_tests with passRate 0', async () => {
    const ws = makeWorkspace({ 'helpers.py': 'def add(a, b):\n    return a + b\n' });
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
    expect(report.outcome).toBe('no_tests');
    expect(report.passRate).toBe(0);
  });

  test('testPaths restricts the run', async () => {
    const ws = makeWorkspace({ 'test_ok.py': PASSING_PY, 'test_fail.py': FAILING_PY });
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      testPaths: ['test_ok.py'],
    });
    expect(report.passed).toBe(3);
    expect(report.failed).toBe(0);
  });

  test('heartbeat is called while the suite runs', async () => {
    const ws = makeWorkspace({ 'test_slow.py': 'import time\n\ndef test_slow():\n    time.sleep(4.5)\n' });
    let beats = 0;
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      heartbeat: () => beats++,
    });
    expect(report.passed).toBe(1);
    expect(beats).toBeGreaterThanOrEqual(3);
  });

  test('heartbeatEveryMs beats more often, for a short heartbeat timeout', async () => {
    const ws = makeWorkspace({ 'test_slow.py': 'import time\n\ndef test_slow():\n    time.sleep(2.5)\n' });
    let beats = 0;
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      heartbeat: () => beats++,
      heartbeatEveryMs: 300,
    });
    expect(report.passed).toBe(1);
    // Every 2 s by default: two or three beats in this time.
    expect(beats).toBeGreaterThanOrEqual(7);
  });

  test('abort kills the run and rejects', async () => {
    const ws = makeWorkspace({ 'test_sleep.py': 'import time\n\ndef test_sleep():\n    time.sleep(60)\n' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 1500);
    const started = Date.now();
    await expect(
      runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap', signal: controller.signal }),
    ).rejects.toThrow(/aborted/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

const MATH_TS = 'export function add(a: number, b: number): number {\n  return a + b;\n}\n';
const MATH_TEST_TS = `import { add } from './math';

interface Case { a: number; b: number; sum: number }
const cases: Case[] = [{ a: 1, b: 2, sum: 3 }, { a: -1, b: 1, sum: 0 }];

describe('add', () => {
  test.each(cases)('adds $a and $b', ({ a, b, sum }) => {
    expect(add(a, b)).toBe(sum);
  });
  test('is wrong on purpose', () => {
    expect(add(2, 2)).toBe(5);
  });
});
`;

describe('jest runner in bwrap', () => {
  test('a TypeScript suite importing a sibling .ts file runs', async () => {
    const ws = makeWorkspace({ 'src/math.ts': MATH_TS, 'src/math.test.ts': MATH_TEST_TS });
    const report = await runTestSuite({ workspace: ws, language: 'typescript', mode: 'bwrap' });
    expect(report.outcome).toBe('completed');
    expect([report.passed, report.failed]).toEqual([2, 1]);
    const wrong = report.cases.find((c) => c.status === 'failed');
    expect(wrong?.name).toBe('src/math.test.ts::add is wrong on purpose');
    expect(wrong?.message).toContain('Expected: 5');
  });

  test('a JavaScript suite with ES module syntax passes', async () => {
    const ws = makeWorkspace({
      'lib/greet.js': 'export const greet = (name) => `hello ${name}`;\n',
      'lib/greet.spec.js':
        "import { greet } from './greet';\n\ntest('greets', () => {\n  expect(greet('ada')).toBe('hello ada');\n});\n",
      'node_modules/pkg/ignored.test.js':
        "test('never runs', () => { throw new Error('collected from node_modules'); });\n",
    });
    const report = await runTestSuite({ workspace: ws, language: 'javascript', mode: 'bwrap' });
    expect(report.outcome).toBe('completed');
    expect(report.passRate).toBe(1);
    expect(report.cases).toEqual([{ name: 'lib/greet.spec.js::greets', status: 'passed' }]);
  });

  test('a syntax error in a test file is a collection error', async () => {
    const ws = makeWorkspace({
      'src/math.ts': MATH_TS,
      'src/ok.test.ts': "test('ok', () => {});\n",
      'src/bad.test.ts': 'const x: number = ;\n',
    });
    const report = await runTestSuite({ workspace: ws, language: 'typescript', mode: 'bwrap' });
    expect(report.outcome).toBe('collection_error');
    expect(report.passRate).toBe(0);
    expect(report.errors).toBeGreaterThanOrEqual(1);
    expect(report.message).toContain('bad.test.ts');
  });

  test('testPaths restricts a jest run', async () => {
    const ws = makeWorkspace({
      'src/math.ts': MATH_TS,
      'src/math.test.ts': MATH_TEST_TS,
      'src/ok.test.ts': "test('ok', () => {});\n",
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'typescript',
      mode: 'bwrap',
      testPaths: ['src/ok.test.ts'],
    });
    expect(report.cases).toEqual([{ name: 'src/ok.test.ts::ok', status: 'passed' }]);
  });

  test('no test files is no_tests', async () => {
    const ws = makeWorkspace({ 'src/math.ts': MATH_TS });
    const report = await runTestSuite({ workspace: ws, language: 'typescript', mode: 'bwrap' });
    expect(report.outcome).toBe('no_tests');
    expect(report.passRate).toBe(0);
  });
});

describe("mode 'none'", () => {
  test('runs the same python suite bare', async () => {
    const ws = makeWorkspace({ 'test_fail.py': FAILING_PY });
    const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'none' });
    expect(report.sandbox).toBe('none');
    expect([report.passed, report.failed, report.errors, report.skipped]).toEqual([1, 1, 1, 1]);
  });

  test('runs a TypeScript suite bare', async () => {
    const ws = makeWorkspace({ 'math.ts': MATH_TS, 'math.test.ts': MATH_TEST_TS });
    const report = await runTestSuite({ workspace: ws, language: 'typescript', mode: 'none' });
    expect([report.passed, report.failed]).toEqual([2, 1]);
    expect(fs.readdirSync(ws).sort()).toEqual(['math.test.ts', 'math.ts']);
  });

  test('checkSandboxAvailable warns', () => {
    const result = checkSandboxAvailable('none');
    expect(result.ok).toBe(true);
    expect(result.ok && result.warning).toMatch(/without a sandbox/);
  });
});

describe('availability and bad input', () => {
  test('bwrap is available here', () => {
    expect(checkSandboxAvailable('bwrap')).toEqual({ ok: true });
  });

  test('without bwrap on PATH the run is a sandbox_error that says how to fix it', async () => {
    const ws = makeWorkspace({ 'test_ok.py': PASSING_PY });
    const savedPath = process.env.PATH;
    process.env.PATH = path.join(ws, 'no-such-bin');
    try {
      const check = checkSandboxAvailable('bwrap');
      expect(check.ok).toBe(false);
      expect(!check.ok && check.message).toMatch(/apt-get install bubblewrap/);
      const report = await runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap' });
      expect(report.outcome).toBe('sandbox_error');
      expect(report.passRate).toBe(0);
      expect(report.message).toMatch(/apt-get install bubblewrap/);
      expect(report.message).toMatch(/ACA_SANDBOX=none/);
    } finally {
      process.env.PATH = savedPath;
    }
  });

  test('bad input throws clear errors', async () => {
    await expect(
      runTestSuite({ workspace: '/no/such/workspace', language: 'python', mode: 'bwrap' }),
    ).rejects.toThrow(/does not exist/);
    const ws = makeWorkspace({});
    await expect(runTestSuite({ workspace: ws, language: 'cobol' as never, mode: 'bwrap' })).rejects.toThrow(
      /unknown language/,
    );
    await expect(
      runTestSuite({ workspace: ws, language: 'python', mode: 'docker' as never }),
    ).rejects.toThrow(/unknown sandbox mode/);
    await expect(
      runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap', testPaths: ['../x.py'] }),
    ).rejects.toThrow(/inside it/);
    await expect(
      runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap', limits: { wallTimeoutMs: -1 } }),
    ).rejects.toThrow(/wallTimeoutMs/);
  });

  test('defaults are the documented ones', () => {
    expect(DEFAULT_SANDBOX_LIMITS).toEqual({
      wallTimeoutMs: 120_000,
      cpuSeconds: 60,
      memoryBytes: 1024 ** 3,
      runMemoryBytes: 2 * 1024 ** 3,
      maxProcesses: 256,
      maxFileBytes: 64 * 1024 ** 2,
      outputBytes: 64 * 1024,
      maxNewFiles: 20_000,
      maxNewBytes: 1024 ** 3,
    });
  });
});
