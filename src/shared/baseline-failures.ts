/**
 * What a SUCCESS says of the tests that still fail: each failed on the base commit too, so the
 * rule (no regressions, every target passes) excused it. Said on a line of its own wherever the
 * outcome is shown, naming them (a few), with the way to hold the run to one: `--target`. Pure: the
 * workflow bundle includes this file (the Web UI's details).
 */

import type { RunResult } from './run-types';

/** Names shown on the line; the rest are counted. */
export const BASELINE_FAILURES_SHOWN = 5;

type Outcome = Pick<RunResult, 'state' | 'failingTests' | 'tests'>;

/**
 * The line for a run that ended SUCCESS with tests failing (all of them failing at the baseline
 * too), or null. `shown` renders a test's name for where the line goes (a terminal, markdown).
 */
export function baselineFailuresLine(r: Outcome, shown: (name: string) => string = (n) => n): string | null {
  const names = r.failingTests ?? [];
  if (r.state !== 'SUCCESS' || names.length === 0) return null;
  const count = Math.max(names.length, r.tests.failed + r.tests.errors);
  const listed = names.slice(0, BASELINE_FAILURES_SHOWN).map(shown);
  const more = count - listed.length;
  const tests =
    count === 1
      ? '1 test that failed before the run still fails'
      : `${count} tests that failed before the run still fail`;
  return `${tests}: ${listed.join(', ')}${more > 0 ? ` and ${more} more` : ''}; the run did not have to fix ${count === 1 ? 'it' : 'them'} (no target named ${count === 1 ? 'it' : 'them'}): run again with --target ${shown(names[0]!)} to require it`;
}
