import type { TestCaseResult, TestRunReport } from '../../shared/types';
import { acceptanceTestFiles } from './acceptance';
import { jestRunner } from '../runners/jest-runner';
import { reportFromParsed } from './report';
import type { RunTestsOptions } from '../run-options';
import { selectRunner } from '../runners/select-runner';

/**
 * For a suite run by aca's Jest with the user's acceptance tests: the acceptance tests' results
 * come from a run of their own (jest-verdict-runner.ts), in place of what the whole suite's run
 * said of them. The whole suite's run still reports the other tests, and any sign of tampering
 * it found stands.
 */
export async function withJestAcceptanceVerdict(
  opts: RunTestsOptions,
  main: TestRunReport,
  runVerdict: (testPaths: string[]) => Promise<TestRunReport>,
): Promise<TestRunReport> {
  const acceptance = opts.acceptance;
  if (!acceptance || opts.language === 'python') return main;
  const choice = selectRunner(opts.language, opts.command, opts.dependencies ?? []);
  if (!choice.ok || choice.runner !== jestRunner) return main;
  if (main.outcome !== 'completed' && main.outcome !== 'collection_error' && main.outcome !== 'no_tests')
    return main;
  const files = acceptanceTestFiles(opts.language, acceptance);
  if (files.length === 0) return main;
  const verdict = await runVerdict(files);
  return mergeVerdict(main, verdict, files);
}

/** The whole suite's report with its acceptance cases replaced by the verdict's. */
export function mergeVerdict(main: TestRunReport, verdict: TestRunReport, files: string[]): TestRunReport {
  const isAcceptance = (c: TestCaseResult): boolean =>
    files.some((file) => c.name === file || c.name.startsWith(`${file}::`));
  const output = `${main.output}\n--- the acceptance tests, run on their own for the verdict ---\n${verdict.output}`;
  const common = {
    output,
    cutBytes: main.cutBytes + verdict.cutBytes,
    durationMs: main.durationMs + verdict.durationMs,
    sandbox: main.sandbox,
  };
  const cases = [...main.cases.filter((c) => !isAcceptance(c)), ...verdict.cases];
  if (verdict.outcome !== 'completed') {
    const message = `the acceptance tests, run on their own: ${verdict.message ?? verdict.outcome}`;
    return { ...verdict, ...common, cases, message: message.slice(0, 2000) };
  }
  const collectionError =
    main.outcome === 'collection_error' ? (main.message ?? 'collection error') : undefined;
  const merged = reportFromParsed({ cases, ...(collectionError ? { collectionError } : {}) }, common);
  // The verdict run's message names acceptance tests that did not run; it outranks the count.
  const notRun = verdict.message?.startsWith('acceptance tests given by the user did not run');
  return notRun && merged.outcome === 'completed' ? { ...merged, message: verdict.message } : merged;
}
