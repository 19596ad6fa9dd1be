import type { TestCaseResult } from '../../shared/types';
import type { ParsedReport } from './report';

/** What the results channel said about a run, already in the runner's case names. */
export interface StreamResult {
  cases: TestCaseResult[];
  /** Test files (or collectors) that could not be loaded. */
  collectionErrors: string[];
  /** The plugin's last record arrived: the runner got to the end of its run. */
  finished: boolean;
  /** The exit status the runner announced at its end, where it announces one. */
  announcedExit?: number;
  /** Evidence, found in the stream alone, that something rewrote an outcome. */
  problems: string[];
  /**
   * Tests whose outcome the stream cannot vouch for, each with the reason: reported as errors once
   * the accounts are found to agree.
   */
  voided?: ReadonlyMap<string, string>;
}

export interface CrossCheckInput {
  stream: StreamResult;
  /** The report file's reading; undefined when the runner wrote none. */
  report: ParsedReport | undefined;
  exitCode: number | null;
  reportKey: (streamName: string) => string;
  exitContradiction: (exitCode: number, stream: StreamResult) => string | null;
}

const MAX_LISTED = 5;

/**
 * Compares the three accounts of a run that code under test would have to forge together:
 * the outcomes streamed out as each test ended, the report file written at the end, and the
 * runner's exit status. Each can be rewritten from inside the test process, but not after
 * the fact and not all three by the same trick; a disagreement means something in the
 * process changed what the runner saw, and the run's results cannot be trusted.
 *
 * Returns the problems found (empty when all agree) and the cases to report: the streamed
 * ones, with the failure messages of the report file.
 */
export function crossCheck(input: CrossCheckInput): { problems: string[]; parsed: ParsedReport | undefined } {
  const { stream, report, exitCode } = input;
  const problems = [...stream.problems];

  if (exitCode !== null && stream.announcedExit !== undefined && stream.announcedExit !== exitCode) {
    problems.push(
      `the runner ended its run with status ${stream.announcedExit}, but the process exited with ${exitCode}`,
    );
  }
  if (exitCode === 0 && !stream.finished) {
    problems.push('the process exited 0, but the runner never reached the end of its run');
  }
  if (exitCode !== null && stream.finished) {
    const contradiction = input.exitContradiction(exitCode, stream);
    if (contradiction) problems.push(contradiction);
  }
  if (!report) return { problems, parsed: undefined };

  // Names can repeat (Jest allows two tests of one name in a file): match them as a multiset.
  const reported = new Map<string, TestCaseResult[]>();
  for (const c of report.cases) reported.set(c.name, [...(reported.get(c.name) ?? []), c]);
  const differences: string[] = [];
  const cases: TestCaseResult[] = [];
  for (const streamed of stream.cases) {
    const candidates = reported.get(input.reportKey(streamed.name)) ?? [];
    const index = Math.max(
      0,
      candidates.findIndex((c) => c.status === streamed.status),
    );
    const [inReport] = candidates.splice(index, 1);
    if (!inReport) differences.push(`${streamed.name} (${streamed.status}) is missing from the report`);
    else if (inReport.status !== streamed.status)
      differences.push(`${streamed.name} ${streamed.status}, but the report says ${inReport.status}`);
    const voided = stream.voided?.get(streamed.name);
    const message = voided ?? inReport?.message ?? streamed.message;
    cases.push({
      name: streamed.name,
      status: voided ? 'error' : streamed.status,
      ...(message ? { message } : {}),
    });
  }
  for (const [name, left] of reported)
    for (const c of left) differences.push(`the report lists ${name} (${c.status}), which never ran`);
  if (differences.length > 0) {
    const shown = differences.slice(0, MAX_LISTED).join('; ');
    const more = differences.length > MAX_LISTED ? ` (and ${differences.length - MAX_LISTED} more)` : '';
    problems.push(`the report file disagrees with the results streamed during the run: ${shown}${more}`);
  }
  // Only this direction helps a forger: a report that invents a collection error fails the run anyway.
  if (stream.collectionErrors.length > 0 && report.collectionError === undefined) {
    problems.push(
      `test files failed to load (${stream.collectionErrors.slice(0, MAX_LISTED).join(', ')}), but the report says nothing of it`,
    );
  }
  const collectionError =
    report.collectionError ??
    (stream.collectionErrors.length > 0
      ? `collection error: ${stream.collectionErrors.join(', ')}`
      : undefined);
  return { problems, parsed: { cases, ...(collectionError ? { collectionError } : {}) } };
}

/** The combined status of a test from its phases, as JUnit reports would give it. */
export function combinePhases(phases: { when: string; outcome: string }[]): TestCaseResult['status'] {
  const call = phases.find((p) => p.when === 'call');
  if (call?.outcome === 'failed') return 'failed';
  if (phases.some((p) => p.outcome === 'failed')) return 'error';
  if (phases.some((p) => p.outcome === 'skipped')) return 'skipped';
  return 'passed';
}
