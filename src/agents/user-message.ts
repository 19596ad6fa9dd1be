import type { TargetResult } from '../shared/targets';
import type { Language, TestRunReport } from '../shared/types';
import { percentText } from '../shared/pass-rate';
import { formatLessons } from '../memory/format-lessons';
import { clipEnd } from '../shared/clip-text';
import type { TurnContext } from './turn-context';

const RUNNER_NOTES: Record<Language, string> = {
  python: 'Tests run with pytest: test files are named test_*.py and use plain assert statements.',
  typescript: 'Tests run with Jest: test files are named *.test.ts and use describe/test/expect.',
  javascript: 'Tests run with Jest: test files are named *.test.js and use describe/test/expect.',
};

const MAX_REPORT_CHARS = 12_000;

export function describeTestReport(report: TestRunReport): string {
  const header = `Test run: ${report.outcome}, ${report.passed} passed, ${report.failed} failed, ${report.errors} errors (pass rate ${percentText(report.passRate)}).`;
  const failing = report.cases
    .filter((c) => c.status === 'failed' || c.status === 'error')
    .map((c) => `- ${c.name} (${c.status})${c.message ? `: ${clipEnd(c.message, 1500)}` : ''}`);
  const parts = [header];
  if (report.message) parts.push(`Runner message: ${clipEnd(report.message, 2000)}`);
  if (failing.length) parts.push(`Failing tests:\n${failing.join('\n')}`);
  if (report.output)
    parts.push(
      `Output (tail${report.cutBytes ? `, ${report.cutBytes} bytes cut before it` : ''}):\n${report.output}`,
    );
  return clipEnd(parts.join('\n\n'), MAX_REPORT_CHARS);
}

/** The heading of the project's instructions in a first message. */
export const PROJECT_INSTRUCTIONS_HEADING = 'Project instructions';

/**
 * The first user message of a turn. It always carries the task verbatim; the
 * Coder's carries the latest analysis and any human feedback verbatim too. The project's
 * instructions, when it has any, follow the task under one heading; a repository map, when there
 * is one, comes just before the closing instruction.
 */
export function buildUserMessage(
  ctx: TurnContext,
  report: TestRunReport | null,
  repositoryMap: string | null = null,
  projectInstructions: string | null = null,
): string {
  const runnerNote = ctx.testCommand
    ? `The project's tests run with: ${ctx.testCommand}`
    : RUNNER_NOTES[ctx.language];
  const parts: string[] = [`Task:\n${ctx.task}`, `Language: ${ctx.language}. ${runnerNote}`];
  if (ctx.earlier) {
    parts.push(
      `This run continues an earlier run (${ctx.earlier.run}); the task above is the user's follow-up instruction. The earlier run's task was:\n${ctx.earlier.task}${ctx.earlier.done ? `\nWhat the earlier run did (its work is in the workspace):\n${ctx.earlier.done}` : ''}`,
    );
  }
  if (projectInstructions) {
    parts.push(
      `${PROJECT_INSTRUCTIONS_HEADING} (the repository's own files as the run's base commit has them, then the user's; where two disagree, the later one is nearer the work and wins, but never over the task):\n\n${projectInstructions}`,
    );
  }
  if (ctx.protectedPaths.length) {
    parts.push(
      `Acceptance tests given by the user (read-only, always run): ${ctx.protectedPaths.join(', ')}`,
    );
  }
  switch (ctx.role) {
    case 'planner':
      if (ctx.baselineFailures) parts.push(describeBaselineFailures(ctx.baselineFailures));
      if (ctx.lessons?.length) parts.push(formatLessons(ctx.lessons));
      parts.push('Submit your plan with submit_plan.');
      break;
    case 'coder':
      parts.push(`This is coding attempt ${ctx.attempt} of at most ${ctx.maxIterations}.`);
      if (ctx.plan) {
        parts.push(
          `Plan:\n${ctx.plan.summary}\nSteps:\n${ctx.plan.steps.map((s, i) => `${i + 1}. ${s}`).join('\n')}\nFiles: ${ctx.plan.files.join(', ')}`,
        );
      }
      if (ctx.analysis) {
        parts.push(
          `The tests failed on the previous attempt.\nRoot cause: ${ctx.analysis.rootCause}\nFix hypothesis: ${ctx.analysis.fixHypothesis}\nFiles to change: ${ctx.analysis.filesToChange.join(', ') || '(not named)'}`,
        );
      }
      if (ctx.regressions?.length) parts.push(describeRegressions(ctx.regressions));
      if (ctx.targets?.length) parts.push(describeTargetList(ctx.targets));
      if (ctx.notes?.length) parts.push(`Notes from the run:\n${ctx.notes.map((n) => `- ${n}`).join('\n')}`);
      if (ctx.feedback?.length)
        parts.push(`Guidance from the user:\n${ctx.feedback.map((f) => `- ${f}`).join('\n')}`);
      parts.push('Write the code with create_file, then call finish.');
      break;
    case 'tester':
      parts.push(`This is test-writing pass ${ctx.testPass ?? 1}.`);
      if (ctx.analysis?.testsWrong) {
        parts.push(
          `The last analysis found the tests wrong.\nRoot cause: ${ctx.analysis.rootCause}\nFix hypothesis: ${ctx.analysis.fixHypothesis}`,
        );
      }
      if ((ctx.testPass ?? 1) === 1) {
        parts.push(
          "First write a test that reproduces the task (it fails until the task is done), next to the project's own tests.",
        );
      }
      parts.push('Write the tests with create_file, then call finish.');
      break;
    case 'reflector':
      parts.push(`Analyse the failed test run of attempt ${ctx.attempt}.`);
      if (ctx.regressions?.length) parts.push(describeRegressions(ctx.regressions));
      if (ctx.targets?.length) parts.push(describeTargetList(ctx.targets));
      if (report) parts.push(describeTestReport(report));
      parts.push('Submit your analysis with submit_analysis.');
      break;
  }
  if (repositoryMap) parts.splice(parts.length - 1, 0, repositoryMap);
  return parts.join('\n\n');
}

function describeTargetList(targets: TargetResult[]): string {
  return `Target tests: the run succeeds only when every one of them passes, even one that failed before the run started (outcome in the last test run):\n${targets.map((t) => `- ${t.id}: ${t.outcome}`).join('\n')}`;
}

function describeBaselineFailures(failures: { names: string[]; count: number }): string {
  const more = failures.count - failures.names.length;
  return `Tests that already fail on the base commit, before any change (${failures.count}):\n${failures.names.map((n) => `- ${n}`).join('\n')}${more > 0 ? `\n- and ${more} more` : ''}\nThe run may end with these still failing unless they are targets. If the task asks for one of them to pass, name it in submit_plan's targets.`;
}

function describeRegressions(regressions: string[]): string {
  return `Tests that passed before this run started and fail or are gone now (regressions; they must pass again):\n${regressions.map((r) => `- ${r}`).join('\n')}`;
}
