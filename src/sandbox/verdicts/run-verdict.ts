import type { SandboxMode, TestRunReport } from '../../shared/types';
import { clipStart } from '../../shared/clip-text';
import { checkAcceptanceCases } from './acceptance';
import type { SandboxLimits } from '../launch/limits';
import type { ProcessRunResult } from '../launch/process-tree';
import { readBoundedReport } from './report-file';
import {
  clipReportMessage,
  failureReport,
  reportFromParsed,
  tamperedReport,
  type ParsedReport,
} from './report';
import { crossCheck } from './result-check';
import type { ReportOnlyRunner, TestRunner } from '../runners/runner';
import type { HonestSkip } from './jest-declared-skips';

/** What the worker knows of the acceptance tests a run must hold, before it runs. */
export interface Expectations {
  testFiles: string[];
  ids: string[] | undefined;
  /**
   * The skipped acceptance tests that are the user's own results: those the acceptance files skip
   * themselves (Jest), or every one after the verdict process judged each skip (pytest).
   */
  honestSkip?: HonestSkip;
}

export interface RunOutcomeInput {
  runner: TestRunner;
  workspaceSeenByRunner: string;
  reportPath: string;
  result: ProcessRunResult;
  limits: SandboxLimits;
  mode: SandboxMode;
  signal: AbortSignal | undefined;
  expected: Expectations | undefined;
  /** Acceptance copies found changed in the workspace (and restored). */
  damaged: string[];
  /** What the run added to the workspace. */
  growth: { files: number; bytes: number };
}

/**
 * What a finished test run amounts to, from what the worker saw (the process's exit, its output,
 * the results channel, the workspace afterwards) and the report file, each checked against the
 * others: anything the code under test could have forged or flooded ends as `tampered` or
 * `limit_exceeded`, never as a pass.
 */
export function judgeRun(input: RunOutcomeInput): TestRunReport {
  const { runner, result, limits } = input;
  const report = readBoundedReport(input.reportPath, runner.reportExtension === 'xml' ? 'xml' : 'json');
  throwIfAborted(input.signal);

  const common = {
    output: result.output.toString(),
    cutBytes: result.output.cutBytes,
    durationMs: result.durationMs,
    sandbox: input.mode,
  };
  const tail = lastLines(common.output, 15);
  if (input.damaged.length > 0) {
    return tamperedReport(
      [`acceptance tests given by the user were changed in the workspace: ${input.damaged.join(', ')}`],
      common,
    );
  }
  const grown = overGrowth(input.growth, limits);
  if (grown) return failureReport('limit_exceeded', `${grown}. Last output:\n${tail}`, common);
  if (result.timedOut) {
    return failureReport(
      'timeout',
      `wall-clock limit of ${limits.wallTimeoutMs} ms reached; the process tree was killed. Last output:\n${tail}`,
      common,
    );
  }
  if (result.results.overflowed) {
    return tamperedReport(['the results channel was flooded beyond its limit'], common);
  }
  if (report.kind === 'refused') {
    return failureReport('limit_exceeded', `the test report was refused: ${report.reason}`, common);
  }
  let parsedReport: ParsedReport | undefined;
  if (report.kind === 'read') {
    try {
      parsedReport = runner.parse(report.text, {
        exitCode: result.exitCode,
        workspace: input.workspaceSeenByRunner,
      });
    } catch (err) {
      return failureReport(
        'collection_error',
        `unreadable test report: ${(err as Error).message}. Last output:\n${tail}`,
        common,
      );
    }
  }
  let parsed: ParsedReport | undefined;
  if (runner.resultsChannel) {
    const checked = crossCheck({
      stream: runner.readStream(result.results.text(), input.workspaceSeenByRunner),
      report: parsedReport,
      exitCode: result.exitCode,
      reportKey: (name) => runner.reportKey(name),
      exitContradiction: (code, s) => runner.exitContradiction(code, s),
    });
    if (checked.problems.length > 0) return tamperedReport(checked.problems, common);
    parsed = checked.parsed;
  } else {
    // No stream to cross-check: the project's own runner (its vitest, mocha, node --test) cannot
    // load aca's plugin, and a command line is what the user chose to trust. Its report is taken
    // as it stands; every other check (bounded report, growth, time, acceptance copies) still holds.
    parsed = reportWithoutStream(runner, parsedReport, result, tail);
  }
  if (!parsed) {
    const how = result.exitSignal
      ? `was killed by ${result.exitSignal}`
      : `exited with code ${String(result.exitCode)}`;
    return {
      ...failureReport(
        'collection_error',
        `the test runner ${how} without writing its report (crash, CPU or memory limit?). Last output:\n${tail}`,
        common,
      ),
      environment: `the test runner ${how} without writing its report`,
    };
  }
  if (input.expected) {
    const { cases, missing } = checkAcceptanceCases(
      parsed.cases,
      input.expected.testFiles,
      input.expected.ids,
      input.expected.honestSkip,
    );
    parsed = { ...parsed, cases };
    if (missing.length > 0 && parsed.collectionError === undefined) {
      const report = reportFromParsed(parsed, common);
      return {
        ...report,
        message: clipReportMessage(`acceptance tests given by the user did not run: ${missing.join(', ')}`),
      };
    }
  }
  return reportFromParsed(parsed, common);
}

/**
 * The result of a runner without a results channel. Its exit status can only make the result
 * worse: a run that exits non-zero while its report shows no failing test broke somewhere outside
 * the tests (an unhandled error, a file that did not load) and is not a pass.
 */
function reportWithoutStream(
  runner: ReportOnlyRunner,
  report: ParsedReport | undefined,
  result: ProcessRunResult,
  tail: string,
): ParsedReport | undefined {
  if (!report) {
    return runner.withoutReport?.({
      exitCode: result.exitCode,
      exitSignal: result.exitSignal,
      output: result.output.toString(),
    });
  }
  const failing = report.cases.some((c) => c.status === 'failed' || c.status === 'error');
  if (result.exitCode === 0 || failing || report.collectionError !== undefined) return report;
  const how = result.exitSignal
    ? `was killed by ${result.exitSignal}`
    : `exited with code ${String(result.exitCode)}`;
  return {
    ...report,
    collectionError: `the test runner ${how}, yet its report shows no failing test. Last output:\n${tail}`,
  };
}

function overGrowth(growth: { files: number; bytes: number }, limits: SandboxLimits): string | null {
  if (growth.files > limits.maxNewFiles) {
    return `the tests left ${growth.files} more files in the workspace than it held before, over the limit of ${limits.maxNewFiles}`;
  }
  if (growth.bytes > limits.maxNewBytes) {
    return `the tests left ${growth.bytes} more bytes in the workspace than it held before, over the limit of ${limits.maxNewBytes}`;
  }
  return null;
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const error = new Error('test run aborted');
  error.name = 'AbortError';
  throw error;
}

function lastLines(text: string, n: number): string {
  return clipStart(text.trimEnd().split('\n').slice(-n).join('\n'), 1500);
}
