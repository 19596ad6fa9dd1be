import type { ChangedFile, RunCost, RunResult, RunSnapshot } from '../shared/run-types';
import { printableLine, printableName } from '../shared/terminal-text';
import { passRateText } from '../shared/pass-rate';
import { describeTargets } from '../shared/targets';
import { baselineFailuresLine } from '../shared/baseline-failures';
import type { TokenUsage } from '../shared/types';

export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return m > 0 ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

export function formatPassRate(rate: number | null, tests?: RunResult['tests']): string {
  return passRateText(rate, tests);
}

/**
 * One line that says where a run is: state, iteration x/max, pass rate, elapsed time, tokens,
 * cost. Redrawn in place on a terminal, so nothing in it may move the cursor or start a line.
 */
export function progressLine(s: RunSnapshot, elapsedMs: number): string {
  const state = shownState(s);
  const tokens = s.tokens.prompt + s.tokens.completion;
  const line = [
    state.padEnd(10),
    `iteration ${s.iterations}/${s.maxIterations}`,
    ...(s.waiting === 'limit' ? [`at its limit: aca extend ${s.workflowId} --iterations N`] : []),
    `pass ${formatPassRate(s.passRate)}`,
    formatDuration(elapsedMs),
    `${tokens} tokens`,
    ...(s.cost ? [formatUsd(s.cost.usd)] : []),
  ].join('  ');
  return printableLine(line);
}

/** The outcome of an ended run, one field a line, each rendered for the terminal. */
export function summaryLines(r: RunResult, uiLink: string): string[] {
  const outcome = r.state === 'SUCCESS' ? 'SUCCESS' : `${r.state} (${r.reason ?? 'unknown reason'})`;
  const lines = [
    `${outcome} after ${r.iterations} iteration${r.iterations === 1 ? '' : 's'} of at most ${r.maxIterations}`,
    `  tests:     ${testsText(r)}`,
    `  tokens:    ${tokenText(r.tokens)}`,
    `  cost:      ${costText(r.cost)}`,
    `  workspace: ${printableName(r.workspace)}`,
  ];
  if (r.repo) lines.push(`  repo:      ${printableName(r.repo)}`);
  if (r.branch)
    lines.push(`  branch:    ${r.branch} (base ${shortSha(r.baseCommit)}, head ${shortSha(r.headCommit)})`);
  if (r.baseline) {
    lines.push(`  baseline:  ${r.baseline.passed} passed, ${r.baseline.failed} failing before the run`);
  }
  if (r.targets?.length) lines.push(`  targets:   ${describeTargets(r.targets, printableName)}`);
  if (r.regressions.length) lines.push(`  regressions: ${r.regressions.map(printableName).join(', ')}`);
  if (r.failingTests?.length) lines.push(`  failing:   ${r.failingTests.map(printableName).join(', ')}`);
  const excused = baselineFailuresLine(r, printableName);
  if (excused) lines.push(`  warning:   ${excused}`);
  if (r.error && r.state !== 'SUCCESS') lines.push(`  error:     ${r.error}`);
  lines.push(`  web UI:    ${uiLink}`);
  if (r.changedFiles.length) {
    lines.push(`  changed files (aca diff ${r.workflowId}${r.repo ? `; aca apply ${r.workflowId}` : ''}):`);
    for (const f of r.changedFiles)
      lines.push(`    ${changeMark(f.status)} ${printableName(f.path)} (+${f.added} -${f.removed})`);
  } else if (r.files.length) {
    lines.push(`  files:     ${r.files.map(printableName).join(', ')}`);
  }
  return lines.map(printableLine);
}

/** A run's test counts and pass rate; a run whose tests never counted one has no rate to show. */
function testsText(r: RunResult): string {
  const { passed, failed, errors } = r.tests;
  if (passed + failed + errors === 0) return 'no tests run';
  return `${passed} passed, ${failed} failed, ${errors} errors (pass rate ${formatPassRate(r.passRate, r.tests)})`;
}

/** Dollars with enough digits for the cents of a small run: $0.0123. */
export function formatUsd(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

export function tokenText(t: TokenUsage): string {
  const parts = [`${t.prompt} prompt`];
  if (t.cached) parts.push(`(${t.cached} cached)`);
  parts.push(`+ ${t.completion} completion`);
  if (t.reasoning) parts.push(`(${t.reasoning} reasoning)`);
  return parts.join(' ');
}

/** The run's cost and its share per agent, or why there is none. */
export function costText(cost: RunCost | null): string {
  if (!cost) return 'unknown (no price for this model; ACA_PRICES can give one)';
  const agents = (Object.entries(cost.byAgent) as Array<[string, number]>)
    .filter(([, usd]) => usd > 0)
    .map(([agent, usd]) => `${agent} ${formatUsd(usd)}`);
  return `${formatUsd(cost.usd)}${agents.length ? ` (${agents.join(', ')})` : ''}`;
}

function shortSha(sha: string | null): string {
  return sha ? sha.slice(0, 10) : '-';
}

function changeMark(status: ChangedFile['status']): string {
  return status === 'added' ? 'A' : status === 'deleted' ? 'D' : 'M';
}

/** Same key => nothing worth a new line on a non-terminal output. */
export function progressKey(s: RunSnapshot): string {
  return `${shownState(s)}|${s.iterations}|${s.maxIterations}|${s.passRate}`;
}

function shownState(s: RunSnapshot): string {
  if (s.paused) return 'PAUSED';
  return s.waiting === 'limit' ? 'WAITING' : s.state;
}
