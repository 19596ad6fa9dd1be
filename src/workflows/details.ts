import type { RunSnapshot } from '../shared/run-types';

/** The run's current details in the Web UI, as Temporal markdown (a list: single newlines would merge lines into one paragraph). */
export function renderDetails(snapshot: RunSnapshot): string {
  const passRate = snapshot.passRate === null ? 'not run yet' : `${Math.round(snapshot.passRate * 100)}%`;
  const lines = [
    `- **State:** ${snapshot.state}${snapshot.paused ? ' (`aca resume` continues the run)' : ''}`,
    `- **Iteration:** ${snapshot.iterations}/${snapshot.maxIterations}`,
    `- **Pass rate:** ${passRate} (${snapshot.tests.passed} passed, ${snapshot.tests.failed} failed, ${snapshot.tests.errors} errors)`,
    `- **Tokens:** ${snapshot.tokens.prompt} prompt, ${snapshot.tokens.completion} completion`,
  ];
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
