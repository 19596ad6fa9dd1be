import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DependencyFolder } from '../../shared/test-command';
import type { TestRunReport } from '../../shared/types';
import { clipReportMessage, reportFromParsed } from './report';

/** Entries looked at before assuming the workspace holds tests of its own. */
const WALK_LIMIT = 5000;
const TEST_FILE = /^(test_.*|.*_test)\.py$/;
/** Folders pytest does not collect from by default (its `norecursedirs`), plus caches. */
const NOT_COLLECTED = new Set(['node_modules', 'venv', 'build', 'dist', 'CVS', '_darcs', '__pycache__']);

/**
 * Whether the workspace may hold tests besides the acceptance files (the Tester's, the
 * repository's), so that the run's own process must run before the verdict process. Errs towards
 * yes: any other test file or conftest.py, or a workspace too large to look through quickly.
 */
export function mayHoldOtherTests(
  workspace: string,
  acceptanceFiles: string[],
  dependencies: DependencyFolder[],
): boolean {
  const skip = new Set(dependencies.map((d) => d.relative));
  const accepted = new Set(acceptanceFiles);
  const pending = [''];
  let seen = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(workspace, dir), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > WALK_LIMIT) return true;
      const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && !NOT_COLLECTED.has(entry.name) && !skip.has(rel))
          pending.push(rel);
      } else if ((TEST_FILE.test(entry.name) || entry.name === 'conftest.py') && !accepted.has(rel)) {
        return true;
      }
    }
  }
  return false;
}

/**
 * One report from the run's own process (null when it had nothing to run) and the verdict
 * process: the acceptance cases, and every test the verdict ran, are the verdict's alone; tests
 * of `gone` files (base test files the run deleted or replaced) are nobody's. Either account showing tampering, or a
 * run that broke, decides the whole.
 */
export function mergeReports(
  main: TestRunReport | null,
  verdict: TestRunReport,
  acceptanceTests: string[],
  gone: readonly string[] = [],
): TestRunReport {
  if (!main) return verdict;
  const common = {
    output: `${main.output}\n${verdict.output}`,
    cutBytes: main.cutBytes + verdict.cutBytes,
    durationMs: main.durationMs + verdict.durationMs,
    sandbox: verdict.sandbox,
  };
  if (main.outcome === 'tampered') return { ...main, ...common };
  if (verdict.outcome !== 'completed' && verdict.outcome !== 'no_tests') return { ...verdict, ...common };
  // Tests of a base test file the run replaced (by a link, say) are not the base commit's.
  const isAcceptance = (name: string): boolean =>
    [...acceptanceTests, ...gone].some((file) => name === file || name.startsWith(`${file}::`));
  // The verdict's account of a test outranks the run's own (a changed base test file ran in both).
  const judged = new Set(verdict.cases.map((c) => c.name));
  const cases = [...main.cases.filter((c) => !isAcceptance(c.name) && !judged.has(c.name)), ...verdict.cases];
  const merged = reportFromParsed({ cases }, common);
  // The verdict's own account of acceptance tests that did not run says more than the counts.
  return verdict.message?.startsWith('acceptance tests given by the user did not run')
    ? { ...merged, message: clipReportMessage(verdict.message) }
    : merged;
}

/** A report without the tests of `files`: base test files the run deleted or replaced. */
export function withoutFiles(report: TestRunReport, files: readonly string[]): TestRunReport {
  const inFiles = (name: string): boolean =>
    files.some((file) => name === file || name.startsWith(`${file}::`));
  if (!report.cases.some((c) => inFiles(c.name))) return report;
  const { output, cutBytes, durationMs, sandbox } = report;
  return reportFromParsed(
    { cases: report.cases.filter((c) => !inFiles(c.name)) },
    { output, cutBytes, durationMs, sandbox },
  );
}
