import { baselineDiagnosis, limitHit, outputTail } from '../../../src/activities/environment-diagnosis';
import { resolveLimits } from '../../../src/sandbox';
import type { TestRunReport } from '../../../src/shared/types';

const limits = resolveLimits({});
const report = (over: Partial<TestRunReport>): TestRunReport => ({
  outcome: 'completed',
  passed: 0,
  failed: 0,
  errors: 0,
  skipped: 0,
  passRate: 0,
  cases: [],
  output: '',
  cutBytes: 0,
  durationMs: 1,
  sandbox: 'bwrap',
  ...over,
});

describe('what a test run says of the environment it ran in', () => {
  test.each([
    [{ outcome: 'timeout' as const }, /^the wall-clock limit of 120 s was hit/],
    [{ output: 'E   MemoryError\n' }, /^the memory limit was hit \(1024 MiB/],
    [
      { output: "RuntimeError: can't start new thread\n" },
      /^a limit on threads, processes or memory was hit/,
    ],
    [
      { output: 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory' },
      /^the memory limit/,
    ],
    [
      { message: 'the test runner was killed by SIGXCPU without writing its report' },
      /^the CPU time limit of 60 s/,
    ],
  ])('%p names the limit', (over, expected) => {
    expect(limitHit(report(over), limits)).toMatch(expected);
  });

  test('a run that only failed tests hit no limit', () => {
    expect(limitHit(report({ failed: 2, output: 'assert 1 == 2\nAssertionError' }), limits)).toBeNull();
  });

  test('a baseline that ran, even with failing tests or a module that does not import, is no environment problem', () => {
    expect(baselineDiagnosis(report({ failed: 3 }), 'pytest', null)).toBeNull();
    expect(baselineDiagnosis(report({ outcome: 'no_tests' }), 'pytest', null)).toBeNull();
    const importError = report({
      outcome: 'collection_error',
      message: 'collection error: tests/test_x.py: ImportError',
    });
    expect(baselineDiagnosis(importError, 'pytest', null)).toBeNull();
  });

  test('a baseline whose own tests reached into the verdict process stops the run: no verdict on them could be trusted', () => {
    const tampered = report({
      outcome: 'tampered',
      message: 'the code under test reached into the test process: ctypes',
    });
    const diagnosis = baselineDiagnosis(tampered, 'pytest', null);
    expect(diagnosis).toContain(
      "the repository's own tests do what aca's verdict counts as reaching into the test process",
    );
    expect(diagnosis).toContain('ctypes');
    expect(diagnosis).toContain('--test-cmd');
  });

  test('a baseline that could not run says what, the limit, the command and the output tail', () => {
    const crashed = report({
      outcome: 'collection_error',
      message: 'unreadable test report',
      output: `${Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n')}\nMemoryError\n`,
    });
    const limit = limitHit(crashed, limits);
    expect(baselineDiagnosis(crashed, 'python -m pytest', limit)).toBe(
      [
        'the tests cannot run on the base commit: unreadable test report',
        `limit: ${limit!}`,
        'command: python -m pytest',
        `last output:\n${Array.from({ length: 14 }, (_, i) => `line ${i + 16}`).join('\n')}\nMemoryError`,
      ].join('\n'),
    );
    const missing = report({
      outcome: 'collection_error',
      environment: 'the test command could not start (command not found, exit 127)',
    });
    expect(baselineDiagnosis(missing, 'nosuch', null)).toBe(
      'the tests cannot run on the base commit: the test command could not start (command not found, exit 127)\ncommand: nosuch',
    );
    expect(
      baselineDiagnosis(report({ outcome: 'sandbox_error', message: 'bubblewrap failed' }), 'pytest', null),
    ).toMatch(/^the tests cannot run on the base commit: bubblewrap failed/);
  });
});

describe('which outcomes of a baseline say it cannot run', () => {
  test('a timeout or a limit always; a collection error only with a limit hit; a completed run or no tests never', () => {
    const says = (over: Partial<TestRunReport>, limit: string | null) =>
      baselineDiagnosis(report(over), 'pytest', limit);
    expect(says({ outcome: 'timeout' }, null)).toBe(
      'the tests cannot run on the base commit: timeout\ncommand: pytest',
    );
    expect(says({ outcome: 'limit_exceeded', message: 'report too large' }, null)).toBe(
      'the tests cannot run on the base commit: report too large\ncommand: pytest',
    );
    expect(says({ outcome: 'collection_error' }, 'the memory limit was hit')).toBe(
      'the tests cannot run on the base commit: collection_error\nlimit: the memory limit was hit\ncommand: pytest',
    );
    expect(says({ outcome: 'collection_error' }, null)).toBeNull();
    expect(says({ outcome: 'no_tests' }, null)).toBeNull();
    // On the base commit only the repository's own tests could have done it (see below).
    expect(says({ outcome: 'tampered' }, null)).toContain("the repository's own tests");
  });

  test('a limit named in the output of a baseline that ran or found no tests is no diagnosis', () => {
    // A suite may print the words itself (a test of the code's own MemoryError) and still finish.
    const output = 'tests/test_mem.py::test_huge FAILED\nE   MemoryError\n';
    const limit = limitHit(report({ output }), limits);
    expect(limit).toBe('the memory limit was hit (1024 MiB; --memory, or limits.memoryMiB in .aca.json)');
    for (const outcome of ['completed', 'no_tests'] as const) {
      expect(baselineDiagnosis(report({ outcome, failed: 1, output }), 'pytest', limit)).toBeNull();
    }
    expect(baselineDiagnosis(report({ outcome: 'collection_error', output }), 'pytest', limit)).toBe(
      [
        'the tests cannot run on the base commit: collection_error',
        `limit: ${limit!}`,
        'command: pytest',
        'last output:\ntests/test_mem.py::test_huge FAILED\nE   MemoryError',
      ].join('\n'),
    );
  });

  test('the limits named from the message as well as the output, with their sizes', () => {
    const small = {
      ...limits,
      memoryBytes: 256 * 1024 * 1024,
      maxFileBytes: 8 * 1024 * 1024,
      maxProcesses: 64,
    };
    expect(limitHit(report({ message: 'MemoryError in worker' }), small)).toMatch(
      /^the memory limit was hit \(256 MiB/,
    );
    expect(limitHit(report({ output: 'fork: retry: Resource temporarily unavailable' }), small)).toBe(
      'a limit on threads, processes or memory was hit (64 processes, 256 MiB; --memory raises the memory)',
    );
    expect(limitHit(report({ output: 'File size limit exceeded (core dumped)' }), small)).toBe(
      'the file size limit of 8 MiB was hit',
    );
  });

  test('the tail of the output is its last lines, cut to the last characters', () => {
    expect(outputTail('a\nb\nc\n', 2)).toBe('b\nc');
    expect(outputTail('abcdef', 15, 3)).toBe('def');
  });
});
