import * as path from 'node:path';
import { z } from 'zod';
import type { TestCaseResult } from '../../shared/types';
import { stripVTControlCharacters } from 'node:util';
import { clipCaseMessage, type ParsedReport } from '../verdicts/report';
import type { StreamResult } from '../verdicts/result-check';
import { JestRecord, parseRecords } from '../verdicts/results-channel';
import { NODE_ADDRESS_SPACE_HEADROOM, nodeHeapFlag, nodeRunEnv } from './node-runtime';
import { baseEnv, type RunnerPaths, type StreamingRunner } from './runner';

/** Test files: *.test.{js,ts} and *.spec.{js,ts} (plus jsx/tsx) anywhere but node_modules. */
export const JEST_TEST_MATCH = ['**/*.test.[jt]s?(x)', '**/*.spec.[jt]s?(x)'];

/**
 * The config is passed on the command line so the workspace's own jest config
 * (which the model may have written or broken) is not needed and nothing is
 * written outside the workspace.
 */
export function jestConfig(paths: RunnerPaths): Record<string, unknown> {
  return {
    rootDir: paths.workspace,
    roots: ['<rootDir>'],
    testEnvironment: 'node',
    testMatch: JEST_TEST_MATCH,
    testPathIgnorePatterns: ['/node_modules/'],
    transform: { '^.+\\.[jt]sx?$': path.posix.join(paths.runnerDir, 'transform.js') },
    transformIgnorePatterns: ['/node_modules/'],
    moduleFileExtensions: ['ts', 'tsx', 'js', 'jsx', 'json', 'node'],
    cacheDirectory: path.posix.join(paths.tmp, 'jest-cache'),
    watchman: false,
    // Jest otherwise shells out to `find`; the node crawler needs nothing from the host.
    haste: { forceNodeFilesystemAPI: true },
    maxWorkers: 1,
    // Jest's own output for the agents to read, and aca's results channel (results-channel.ts).
    reporters: ['default', path.posix.join(paths.runnerDir, 'aca-results-reporter.js')],
  };
}

/** What both Jest runners (aca's and the project's) share: the report, the stream and their checks. */
export const jestReading = {
  resultsChannel: true,
  needsNode: true,
  addressSpaceHeadroomBytes: NODE_ADDRESS_SPACE_HEADROOM,
  reportExtension: 'json',
  casesNamedByFile: true,
  parse(reportText: string, { workspace }: { workspace: string }) {
    return parseJestReport(JSON.parse(reportText) as unknown, workspace);
  },
  readStream: readJestStream,
  reportKey: (name: string) => name,
  exitContradiction(exitCode: number, stream: StreamResult) {
    const failing = stream.cases.filter((c) => c.status === 'failed' || c.status === 'error').length;
    if (exitCode === 0 && (failing > 0 || stream.collectionErrors.length > 0))
      return `Jest exited 0, but ${failing} tests failed and ${stream.collectionErrors.length} files did not run`;
    return null;
  },
} as const satisfies Omit<StreamingRunner, 'kind' | 'command'>;

/** aca's own Jest, with aca's configuration on the command line. */
export const jestRunner: StreamingRunner = {
  ...jestReading,
  kind: 'jest',
  command(ctx) {
    const { paths, limits, testPaths, reportName, dependencies } = ctx;
    const argv = [
      paths.node,
      nodeHeapFlag(limits),
      path.posix.join(paths.runnerDir, 'node_modules', 'jest', 'bin', 'jest.js'),
      '--config',
      JSON.stringify(jestConfig(paths)),
      '--ci',
      // One process: no worker pool to fork, and a fork bomb budget that is not spent on jest itself.
      '--runInBand',
      '--json',
      `--outputFile=${path.posix.join(paths.output, reportName)}`,
      // Without it jest writes no report when nothing matches; we want to report no_tests ourselves.
      '--passWithNoTests',
      ...(testPaths.length > 0 ? ['--runTestsByPath', ...testPaths] : []),
    ];
    return { argv, env: { ...baseEnv(paths, dependencies), ...nodeRunEnv(limits), NODE_ENV: 'test' } };
  },
};

export function readJestStream(text: string, workspace: string): StreamResult {
  const read = parseRecords(text, JestRecord);
  if (!read.ok) return { cases: [], collectionErrors: [], finished: false, problems: [read.problem] };
  const cases: TestCaseResult[] = [];
  const collectionErrors: string[] = [];
  let finished = false;
  const problems: string[] = [];
  for (const record of read.records) {
    if (record.t === 'done') {
      finished = true;
      const failing = cases.some((c) => c.status === 'failed' || c.status === 'error');
      if (record.success && failing)
        problems.push('Jest called the run a success, but some of its tests failed');
      continue;
    }
    const file = path.posix.relative(workspace, record.file);
    if (record.t === 'file_error') {
      collectionErrors.push(file);
      cases.push({ name: file, status: 'error' });
    } else {
      cases.push({ name: `${file}::${record.name}`, status: jestStatus(record.status) });
    }
  }
  return { cases, collectionErrors, finished, problems };
}

const AssertionResult = z.object({
  fullName: z.string(),
  status: z.string(),
  failureMessages: z.array(z.string()).nullish(),
});
const SuiteResult = z.object({
  name: z.string(),
  status: z.string(),
  message: z.string().nullish(),
  assertionResults: z.array(AssertionResult),
  testExecError: z.object({ message: z.string().nullish() }).passthrough().nullish(),
});
export const JestReport = z.object({
  numRuntimeErrorTestSuites: z.number(),
  testResults: z.array(SuiteResult),
});

export function parseJestReport(raw: unknown, workspace: string): ParsedReport {
  const report = JestReport.parse(raw);
  const cases: TestCaseResult[] = [];
  const collectionErrors: string[] = [];
  for (const suite of report.testResults) {
    const file = path.posix.relative(workspace, suite.name);
    // A suite that failed with no test results never ran: syntax, import or compile error.
    const brokenSuite =
      suite.testExecError != null || (suite.status === 'failed' && suite.assertionResults.length === 0);
    if (brokenSuite) {
      const detail = stripVTControlCharacters(
        suite.testExecError?.message ?? suite.message ?? 'test suite failed to run',
      ).trim();
      cases.push({ name: file, status: 'error', message: clipCaseMessage(detail) });
      collectionErrors.push(`${file}: ${detail.split('\n').slice(0, 8).join('\n')}`);
      continue;
    }
    for (const assertion of suite.assertionResults) {
      const status = jestStatus(assertion.status);
      const failure = stripVTControlCharacters((assertion.failureMessages ?? []).join('\n')).trim();
      cases.push({
        name: `${file}::${assertion.fullName}`,
        status,
        ...(failure ? { message: clipCaseMessage(failure) } : {}),
      });
    }
  }
  return {
    cases,
    ...(collectionErrors.length > 0
      ? { collectionError: `collection error: ${collectionErrors.join('; ')}` }
      : {}),
  };
}

function jestStatus(status: string): TestCaseResult['status'] {
  switch (status) {
    case 'passed':
      return 'passed';
    case 'failed':
      return 'failed';
    case 'pending':
    case 'skipped':
    case 'todo':
    case 'disabled':
      return 'skipped';
    default:
      return 'error';
  }
}
