import type { TestCaseResult, TestRunReport } from '../shared/types';

export interface BaselineVerdict {
  success: boolean;
  /** Tests that passed at the baseline and now fail, are skipped or are gone. */
  regressions: string[];
  /** Tests failing now that already failed at the baseline: they do not block success. */
  preexisting: string[];
}

const failing = (status: TestCaseResult['status']) => status === 'failed' || status === 'error';

/**
 * Whether a test run is a success, measured against the run's baseline (the same test command on
 * the base commit). Without a baseline every test must pass. With one, a test that already failed
 * there may still fail, unless it is one of the user's acceptance tests, which always must pass;
 * a test that passed there must still pass (failing, skipped or missing is a regression).
 */
export function judgeAgainstBaseline(
  current: TestRunReport,
  baseline: TestRunReport | null,
  acceptanceFiles: readonly string[],
): BaselineVerdict {
  if (current.outcome !== 'completed') return { success: false, regressions: [], preexisting: [] };
  if (!baseline) {
    const success =
      current.passRate >= 1 && current.failed === 0 && current.errors === 0 && current.passed > 0;
    return { success, regressions: [], preexisting: [] };
  }
  const now = new Map<string, TestCaseResult['status'][]>();
  for (const c of current.cases) now.set(c.name, [...(now.get(c.name) ?? []), c.status]);
  const before = new Map<string, TestCaseResult['status'][]>();
  for (const c of baseline.outcome === 'completed' ? baseline.cases : []) {
    before.set(c.name, [...(before.get(c.name) ?? []), c.status]);
  }
  const regressions: string[] = [];
  for (const [name, statuses] of before) {
    if (!statuses.includes('passed')) continue;
    const passedBefore = statuses.filter((s) => s === 'passed').length;
    const passedNow = (now.get(name) ?? []).filter((s) => s === 'passed').length;
    if (passedNow < passedBefore) regressions.push(name);
  }
  const isAcceptance = (name: string) =>
    acceptanceFiles.some((file) => name === file || name.startsWith(`${file}::`));
  const preexisting: string[] = [];
  let blocking = 0;
  for (const c of current.cases) {
    if (!failing(c.status)) continue;
    const failedBefore = (before.get(c.name) ?? []).some(failing);
    if (failedBefore && !isAcceptance(c.name)) preexisting.push(c.name);
    else blocking += 1;
  }
  const success = regressions.length === 0 && blocking === 0 && current.passed > 0;
  return { success, regressions: regressions.sort(), preexisting: [...new Set(preexisting)].sort() };
}
