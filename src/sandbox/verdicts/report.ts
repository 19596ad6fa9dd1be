import { clipEnd, clipStart } from '../../shared/clip-text';
import type { SandboxMode, TestCaseResult, TestRunReport } from '../../shared/types';

/** What a runner's structured report says, before outcome and output are attached. */
export interface ParsedReport {
  cases: TestCaseResult[];
  /** Set when a test file could not be imported or compiled: the run as a whole is not trustworthy. */
  collectionError?: string;
  /** Set when nothing could be tested at all because of the environment (see TestRunReport). */
  environment?: string;
}

/** Per-case messages go to the model; a 1 MB assertion diff would crowd out everything else. */
const MAX_CASE_MESSAGE = 4000;
/** `message` is meant as one line plus a little context. */
const MAX_REPORT_MESSAGE = 2000;

export function clipCaseMessage(text: string): string {
  return clipEnd(text, MAX_CASE_MESSAGE);
}

/** For a message made of a run's output, whose end (the failure summary) matters most. */
export function clipCaseTail(text: string): string {
  return clipStart(text, MAX_CASE_MESSAGE);
}

export function clipReportMessage(text: string): string {
  return clipStart(text, MAX_REPORT_MESSAGE);
}

interface Common {
  output: string;
  cutBytes: number;
  durationMs: number;
  sandbox: SandboxMode;
}

export function reportFromParsed(parsed: ParsedReport, common: Common): TestRunReport {
  const count = (status: TestCaseResult['status']): number =>
    parsed.cases.filter((c) => c.status === status).length;
  const passed = count('passed');
  const failed = count('failed');
  let errors = count('error');
  const skipped = count('skipped');
  if (parsed.collectionError !== undefined) {
    errors = Math.max(errors, 1);
    return {
      outcome: 'collection_error',
      passed,
      failed,
      errors,
      skipped,
      // A suite that did not fully load proves nothing, whatever else passed.
      passRate: 0,
      cases: parsed.cases,
      message: clipReportMessage(parsed.collectionError),
      ...(parsed.environment ? { environment: clipReportMessage(parsed.environment) } : {}),
      ...common,
    };
  }
  if (parsed.cases.length === 0) {
    return {
      outcome: 'no_tests',
      passed: 0,
      failed: 0,
      errors: 0,
      skipped: 0,
      passRate: 0,
      cases: [],
      message: 'no tests were collected',
      ...common,
    };
  }
  const ran = passed + failed + errors;
  return {
    outcome: 'completed',
    passed,
    failed,
    errors,
    skipped,
    passRate: ran === 0 ? 0 : passed / ran,
    cases: parsed.cases,
    ...(failed + errors > 0 ? { message: `${failed} failed, ${errors} errors, ${passed} passed` } : {}),
    ...common,
  };
}

export function failureReport(
  outcome: 'timeout' | 'collection_error' | 'sandbox_error' | 'limit_exceeded',
  message: string,
  common: Common,
): TestRunReport {
  return {
    outcome,
    passed: 0,
    failed: 0,
    errors: outcome === 'collection_error' || outcome === 'limit_exceeded' ? 1 : 0,
    skipped: 0,
    passRate: 0,
    cases: [],
    message: clipReportMessage(message),
    ...common,
  };
}

/**
 * The run's accounts of itself disagree, or something changed the user's acceptance tests:
 * nothing it says can be trusted, so it counts as a failed attempt, and the agents are told why.
 */
export function tamperedReport(problems: string[], common: Common): TestRunReport {
  return {
    outcome: 'tampered',
    passed: 0,
    failed: 0,
    errors: 1,
    skipped: 0,
    passRate: 0,
    cases: [],
    message: clipReportMessage(
      `the test results were tampered with, so this attempt failed: ${problems.join('; ')}. ` +
        'Tests must pass on their own: do not change how tests are collected, run or reported.',
    ),
    ...common,
  };
}
