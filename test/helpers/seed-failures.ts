/**
 * A small, realistic memory: four past runs on different tasks plus the "current" run, whose own
 * failures must never come back to it as lessons.
 */
import type { FailureMemory } from '../../src/memory/failure-repository';
import { uniqueId } from './pg-test-env';

export const CURRENT_TASK = 'Write a CSV parser that handles quoted fields and escaped quotes';

export interface SeededRuns {
  csv: string;
  fib: string;
  http: string;
  date: string;
  current: string;
}

export async function seedFailures(memory: FailureMemory): Promise<SeededRuns> {
  const runs: SeededRuns = {
    csv: uniqueId('csv'),
    fib: uniqueId('fib'),
    http: uniqueId('http'),
    date: uniqueId('date'),
    current: uniqueId('current'),
  };

  await memory.createTask({
    workflowId: runs.csv,
    task: 'Implement parse_csv(text) in csv_parser.py that splits CSV lines into fields, honouring double-quoted fields that contain commas and escaped quotes',
    language: 'python',
  });
  await memory.logIteration({ workflowId: runs.csv, iteration: 1, passRate: 0.5, passed: 2, failed: 2 });
  await memory.storeFailure({
    workflowId: runs.csv,
    iteration: 1,
    testOutput: `FAILED test_csv.py::test_quoted_comma - AssertionError: assert ['a', '"b', 'c"'] == ['a', 'b,c']`,
    rootCause:
      'parse_csv splits on every comma with str.split and ignores double quotes, so a quoted field containing a comma is broken apart',
    fixHypothesis:
      'Scan the line character by character with an in_quotes flag and split only on commas outside quotes',
    filesToChange: ['csv_parser.py'],
  });
  await memory.logIteration({ workflowId: runs.csv, iteration: 2, passRate: 0.75, passed: 3, failed: 1 });
  await memory.storeFailure({
    workflowId: runs.csv,
    iteration: 2,
    testOutput: `FAILED test_csv.py::test_escaped_quote - AssertionError: assert ['say ""hi""'] == ['say "hi"']`,
    rootCause:
      'Doubled quotes inside a quoted field are kept literally instead of being unescaped to one quote',
    fixHypothesis: 'When two quotes appear inside a quoted field emit one quote and stay in_quotes',
    filesToChange: ['csv_parser.py'],
  });
  await memory.logIteration({ workflowId: runs.csv, iteration: 3, passRate: 1, passed: 4, failed: 0 });
  await memory.recordFix({
    workflowId: runs.csv,
    iteration: 3,
    summary:
      'Replaced str.split with a character state machine that tracks in_quotes and turns doubled quotes into one',
  });
  await memory.updateTaskStatus(runs.csv, 'success');

  await memory.createTask({
    workflowId: runs.fib,
    task: 'Write fib(n) in fib.py returning the n-th Fibonacci number, memoized',
    language: 'python',
  });
  await memory.storeFailure({
    workflowId: runs.fib,
    iteration: 1,
    testOutput:
      'E   RecursionError: maximum recursion depth exceeded while calling a Python object\nFAILED test_fib.py::test_large',
    rootCause: 'Naive recursion without memoization hits the recursion limit for n=5000',
    fixHypothesis: 'Use an iterative loop instead of recursion',
    filesToChange: ['fib.py'],
  });
  await memory.updateTaskStatus(runs.fib, 'failed', 'max_iterations');

  await memory.createTask({
    workflowId: runs.http,
    task: 'Build an HTTP server in server.ts that answers GET /health with JSON {"status": "ok"}',
    language: 'typescript',
  });
  await memory.storeFailure({
    workflowId: runs.http,
    iteration: 1,
    testOutput: 'Error: listen EADDRINUSE: address already in use :::3000',
    rootCause: 'The server listens on a fixed port 3000 that the test runner already uses',
    fixHypothesis: 'Listen on port 0 and export the bound address',
    filesToChange: ['server.ts'],
  });
  await memory.recordFix({
    workflowId: runs.http,
    iteration: 2,
    summary: 'Listen on port 0 and read the port from server.address()',
  });
  await memory.updateTaskStatus(runs.http, 'success');

  await memory.createTask({
    workflowId: runs.date,
    task: 'Write a function that parses a date string in ISO 8601 format and returns a datetime',
    language: 'python',
  });
  await memory.storeFailure({
    workflowId: runs.date,
    iteration: 1,
    testOutput: "ValueError: Invalid isoformat string: '2024-01-01T00:00:00Z'",
    rootCause: 'datetime.fromisoformat in Python 3.10 does not accept the Z suffix',
    fixHypothesis: 'Replace a trailing Z with +00:00 before parsing',
    filesToChange: ['dates.py'],
  });
  await memory.updateTaskStatus(runs.date, 'failed', 'budget');

  await memory.createTask({ workflowId: runs.current, task: CURRENT_TASK, language: 'python' });
  await memory.storeFailure({
    workflowId: runs.current,
    iteration: 1,
    testOutput: 'FAILED test_csv.py::test_quoted - this is the current run',
    rootCause: 'CURRENT RUN: quoted fields are split on commas',
    fixHypothesis: 'CURRENT RUN hypothesis',
    filesToChange: ['csv.py'],
  });
  return runs;
}
