import type { RunSnapshot } from '../shared/run-types';
import { passRateText } from '../shared/pass-rate';
import { describeTargets } from '../shared/targets';
import { baselineFailuresLine } from '../shared/baseline-failures';

/** The run's current details in the Web UI, as Temporal markdown (a list: single newlines would merge lines into one paragraph). */
export function renderDetails(snapshot: RunSnapshot): string {
  const passRate =
    snapshot.passRate === null ? 'not run yet' : passRateText(snapshot.passRate, snapshot.tests);
  const lines = [
    `- **State:** ${snapshot.state}${snapshot.paused ? ' (`aca resume` continues the run)' : ''}`,
    `- **Iteration:** ${snapshot.iterations}/${snapshot.maxIterations}`,
    ...(snapshot.waiting === 'limit'
      ? [
          `- **Waiting:** at its iteration limit; \`aca extend ${snapshot.workflowId} --iterations N\` gives it N more attempts, else it ends FAILED max_iterations when its wait is over`,
        ]
      : []),
    `- **Pass rate:** ${passRate} (${snapshot.tests.passed} passed, ${snapshot.tests.failed} failed, ${snapshot.tests.errors} errors)`,
    `- **Tokens:** ${snapshot.tokens.prompt} prompt${snapshot.tokens.cached ? ` (${snapshot.tokens.cached} cached)` : ''}, ${snapshot.tokens.completion} completion${snapshot.tokens.reasoning ? ` (${snapshot.tokens.reasoning} reasoning)` : ''}`,
  ];
  if (snapshot.cost) {
    const agents = Object.entries(snapshot.cost.byAgent)
      .filter(([, usd]) => usd > 0)
      .map(([agent, usd]) => `${agent} $${usd.toFixed(4)}`);
    lines.push(
      `- **Cost:** $${snapshot.cost.usd.toFixed(4)}${agents.length ? ` (${agents.join(', ')})` : ''}`,
    );
  }
  if (snapshot.branch) {
    lines.push(
      `- **Branch:** ${snapshot.branch}${snapshot.repo ? ` of ${snapshot.repo}` : ''} (head ${(snapshot.headCommit ?? '-').slice(0, 10)})`,
    );
  }
  if (snapshot.testCommand) lines.push(`- **Tests run with:** ${snapshot.testCommand}`);
  if (snapshot.baseline) {
    lines.push(`- **Baseline:** ${snapshot.baseline.passed} passed, ${snapshot.baseline.failed} failing`);
  }
  if (snapshot.targets?.length) lines.push(`- **Targets:** ${describeTargets(snapshot.targets)}`);
  if (snapshot.regressions.length) lines.push(`- **Regressions:** ${snapshot.regressions.join(', ')}`);
  if (snapshot.failingTests?.length) {
    const failing = snapshot.failingTests;
    const more = failing.length > 20 ? ` and ${failing.length - 20} more` : '';
    lines.push(`- **Still failing:** ${failing.slice(0, 20).join(', ')}${more}`);
  }
  const excused = baselineFailuresLine(snapshot);
  if (excused) lines.push(`- **Failing before and after the run:** ${excused}`);
  if (snapshot.changedFiles.length) {
    const shown = snapshot.changedFiles.slice(0, 20).map((f) => `${f.path} (+${f.added} -${f.removed})`);
    const more = snapshot.changedFiles.length > 20 ? ` and ${snapshot.changedFiles.length - 20} more` : '';
    lines.push(`- **Changed files:** ${shown.join(', ')}${more}`);
  }
  if (snapshot.warning) lines.push(`- **Warning:** ${snapshot.warning}`);
  if (snapshot.error) lines.push(`- **Last error:** ${snapshot.error}`);
  if (snapshot.lastAnalysis) {
    const a = snapshot.lastAnalysis;
    lines.push(
      '',
      '### Latest analysis',
      `- **Root cause:** ${a.rootCause}`,
      `- **Fix hypothesis:** ${a.fixHypothesis}`,
      `- **Files to change:** ${a.filesToChange.join(', ') || '-'}`,
      `- **Tests wrong:** ${a.testsWrong ? 'yes' : 'no'}`,
    );
  }
  return lines.join('\n');
}
