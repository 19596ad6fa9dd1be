import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { checkSandboxAvailable, runTestSuite } from '../sandbox';
import { Semaphore } from '../shared/semaphore';
import type { Language, SandboxMode } from '../shared/types';
import { withHeartbeats } from './heartbeats';
import type { RunFiles } from './run-files';

export interface TestActivityDeps {
  runFiles: RunFiles;
  sandboxMode: SandboxMode;
  /** Test suites run at once on this worker; more would only fight over the cores. */
  maxConcurrentTestRuns: number;
}

export interface RunTestsInput {
  runKey: string;
  attempt: number;
  workspace: string;
  language: Language;
  /** The folder given with `--tests` and its files (copied into the workspace at the same paths). */
  testsDir?: string | null;
  protectedPaths?: string[];
}

/** What the workflow needs to decide; the full report stays in the run's files. */
export interface TestRunSummary {
  outcome: string;
  passed: number;
  failed: number;
  errors: number;
  passRate: number;
  message: string | null;
  reportRef: string;
  durationMs: number;
  sandboxWarning: string | null;
}

export function createTestActivities(deps: TestActivityDeps) {
  const slots = new Semaphore(deps.maxConcurrentTestRuns);
  return {
    async runTests(input: RunTestsInput): Promise<TestRunSummary> {
      const available = checkSandboxAvailable(deps.sandboxMode);
      if (!available.ok) throw ApplicationFailure.nonRetryable(available.message, 'SandboxUnavailable');
      const sandboxWarning = available.warning ?? null;
      if (sandboxWarning) log.warn(sandboxWarning);
      const ctx = Context.current();
      // Heartbeat while queued too, or a long queue would look like a dead worker; once running,
      // the suite's own progress beats.
      const release = await withHeartbeats(5_000, () => slots.acquire(), 'queued');
      let report;
      try {
        report = await runTestSuite({
          workspace: input.workspace,
          language: input.language,
          mode: deps.sandboxMode,
          ...(input.testsDir && input.protectedPaths?.length
            ? { acceptance: { sourceDir: input.testsDir, files: input.protectedPaths } }
            : {}),
          heartbeat: () => ctx.heartbeat(),
          signal: ctx.cancellationSignal,
        });
      } finally {
        release();
      }
      ctx.metricMeter
        .createHistogram('aca_test_run_duration', 'int', 'ms', 'Wall time of one sandboxed test run')
        .record(report.durationMs, { language: input.language, outcome: report.outcome });
      const reportRef = deps.runFiles.reportRef(input.runKey, input.attempt);
      await deps.runFiles.saveReport(reportRef, report);
      return {
        outcome: report.outcome,
        passed: report.passed,
        failed: report.failed,
        errors: report.errors,
        passRate: report.passRate,
        message: report.message ? report.message.slice(0, 500) : null,
        reportRef,
        durationMs: report.durationMs,
        sandboxWarning,
      };
    },
  };
}
