import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { prepareTrustedTests, type TrustedTests } from './trusted-tests';
import {
  checkSandboxAvailable,
  resolveLimits,
  runTestSuite,
  type SandboxLimits,
  withinMaximums,
} from '../sandbox';
import type { RunTestSetup } from '../shared/run-types';
import type { ProjectLimits } from '../shared/test-command';
import type { Language, SandboxMode, TestRunReport } from '../shared/types';
import { DEFAULT_LIMIT_MAXIMUMS, type LimitMaximums } from '../shared/limit-maximums';
import { clampProjectLimits, type HostRuns } from '../repo';
import { baselineDiagnosis, limitHit } from './environment-diagnosis';
import { judgeAgainstBaseline } from './baseline-verdict';
import { judgeTargets, unknownTargets, type TargetResult } from '../shared/targets';
import { sandboxHeartbeat, withHeartbeats } from './heartbeats';
import { reportRef, type ReportStore } from '../store/report-store';
import type { RunPlace } from '../shared/run-types';
import { atRecordedCommit, commitStep } from './host-steps';
import { FAILURE_TYPES } from '../shared/failure-types';

export interface TestActivityDeps {
  reports: ReportStore;
  /** The runs whose files are on this host. */
  host: HostRuns;
  sandboxMode: SandboxMode;
  /** The most any run's limits may be here (ACA_MAX_*), whatever `.aca.json` or the run's input asks. */
  limitMaximums?: LimitMaximums;
}

export interface RunTestsInput {
  runKey: string;
  attempt: number;
  language: Language;
  /** The folder given with `--tests` and its files (copied into the workspace at the same paths). */
  testsDir?: string | null;
  protectedPaths?: string[];
  /** The project's test command, dependency folders and limits; aca's runner for the language when absent. */
  setup?: RunTestSetup | null;
  /** The stored report of the baseline run, when the run has one. */
  baselineRef?: string | null;
  /** Where the run's files are. */
  place: RunPlace;
  /** The run's last recorded commit: the step starts from it. */
  headCommit: string;
  /**
   * On a host that adopted the run: the commit that added the `--tests` files, whose originals
   * are read there (the folder given is on the host that prepared the run).
   */
  acceptanceCommit?: string | null;
  /** The run's targets, each judged in this run's report. */
  targets?: string[];
  /**
   * A run on a repository: its base commit, whose test files and pytest configuration the verdict
   * process judges and loads (activities/trusted-tests.ts).
   */
  baseCommit?: string | null;
}

export interface CheckTargetsInput {
  /** The stored report the targets are looked for in (the baseline's). */
  reportRef: string;
  targets: string[];
}

export interface RunSetupInput {
  language: Language;
  command: string;
  setup: RunTestSetup;
  /** The user's explicit opt-in (`--setup-network`). */
  network: boolean;
  /** Where the run's files are. */
  place: RunPlace;
  /** The run's last recorded commit: the step starts from it. */
  headCommit: string;
  /** When given, what the command changed is committed with this message, in this activity. */
  commitMessage?: string;
  /** The workflow execution the step belongs to (see HostRuns.commit). */
  execution: string;
}

export interface SetupResult {
  ok: boolean;
  outcome: string;
  message: string | null;
  outputTail: string;
  /** The commit of what the command changed (with commitMessage), or null. */
  commit?: string | null;
}

/** Regressions named in workflow history; the full list stays in the stored report. */
const MAX_NAMED_REGRESSIONS = 50;

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
  /** Every target test passes and no test that passed at the baseline fails or is gone. */
  success: boolean;
  regressions: string[];
  regressionCount: number;
  /** Each target's outcome in this run (absent when the run has none). */
  targets?: TargetResult[];
  /** Targets no case of this run belongs to, not even a skipped one. */
  unknownTargets?: string[];
  /** Tests failing in this run, by name (the first MAX_NAMED_REGRESSIONS). */
  failingTests?: string[];
  /** Why this run tested nothing about the code (a limit, a missing runner, a crash), with the command and output's tail. */
  cannotRun?: string;
}

/**
 * `.aca.json`'s limits in the sandbox's units, held to this worker's maximums: they reach the
 * worker through the run's input, and a base commit's `.aca.json` was never checked against them.
 */
export function sandboxLimitsOf(
  project: ProjectLimits | undefined,
  maximums: LimitMaximums = DEFAULT_LIMIT_MAXIMUMS,
): Partial<SandboxLimits> {
  const MiB = 1024 * 1024;
  const { limits } = clampProjectLimits(project ?? {}, maximums);
  return withinMaximums(
    {
      ...(limits.wallTimeSeconds ? { wallTimeoutMs: limits.wallTimeSeconds * 1000 } : {}),
      ...(limits.cpuSeconds ? { cpuSeconds: limits.cpuSeconds } : {}),
      ...(limits.memoryMiB
        ? { memoryBytes: limits.memoryMiB * MiB, runMemoryBytes: Math.max(2048, 2 * limits.memoryMiB) * MiB }
        : {}),
    },
    maximums,
  );
}

export function createTestActivities(deps: TestActivityDeps) {
  const maximums = deps.limitMaximums ?? DEFAULT_LIMIT_MAXIMUMS;
  const limitsOf = (project: ProjectLimits | undefined): Partial<SandboxLimits> => {
    const { lowered } = clampProjectLimits(project ?? {}, maximums);
    if (lowered.length) log.warn('.aca.json asks for more than this worker allows', { lowered });
    return sandboxLimitsOf(project, maximums);
  };
  return {
    /**
     * Which of the targets a stored report knows (the Planner's, against the baseline): each
     * target's outcome there, `missing` for one no case belongs to.
     */
    async checkTargets(input: CheckTargetsInput): Promise<{ targets: TargetResult[]; unknown: string[] }> {
      const report = await loadBaseline(deps.reports, input.reportRef);
      const cases = report?.cases ?? [];
      return {
        targets: judgeTargets(input.targets, cases, report?.outcome === 'completed'),
        unknown: unknownTargets(input.targets, cases),
      };
    },

    /**
     * The project's setup command, in the sandbox like the tests (no network unless the user
     * opted in): once when the run is prepared, again on a host that adopts it. Its exit status is
     * what counts; the output tail explains a failure.
     */
    async runSetup(input: RunSetupInput): Promise<SetupResult> {
      const available = checkSandboxAvailable(deps.sandboxMode);
      if (!available.ok)
        throw ApplicationFailure.nonRetryable(available.message, FAILURE_TYPES.sandboxUnavailable);
      return atRecordedCommit(deps.host, input, async (place) => {
        const result = await setupIn(place.workTree, input);
        if (!result.ok || !input.commitMessage) return result;
        const commit = await withHeartbeats(5_000, () =>
          commitStep(deps.host, input, {
            message: input.commitMessage!,
            step: 'setup',
            execution: input.execution,
          }),
        );
        return { ...result, commit };
      });
    },

    /**
     * Runs on the host's test queue, whose slots are the test runs this host takes at once. The
     * acceptance originals are restored and the base commit's test configuration written in the
     * same step as the run: a verdict is honest only over files the run's code had no turn to touch.
     */
    async runTests(input: RunTestsInput): Promise<TestRunSummary> {
      const available = checkSandboxAvailable(deps.sandboxMode);
      if (!available.ok)
        throw ApplicationFailure.nonRetryable(available.message, FAILURE_TYPES.sandboxUnavailable);
      const sandboxWarning = available.warning ?? null;
      if (sandboxWarning) log.warn(sandboxWarning);
      return atRecordedCommit(deps.host, input, async (place) => {
        const sourceDir =
          input.testsDir && input.protectedPaths?.length && input.acceptanceCommit
            ? await deps.host.acceptanceOriginals(input.place, input.acceptanceCommit, input.protectedPaths)
            : (input.testsDir ?? null);
        // The repository's own pytest configuration and tests as the base commit has them, for
        // the verdict process to load and judge instead of what the run may have written since.
        const trusted = await prepareTrustedTests({
          language: input.language,
          commonDir: place.commonDir,
          baseCommit: input.baseCommit ?? null,
          acceptanceCommit: input.acceptanceCommit ?? null,
          hasAcceptance: sourceDir !== null,
          ...(input.protectedPaths ? { protectedPaths: input.protectedPaths } : {}),
          ...(input.targets ? { targets: input.targets } : {}),
        });
        try {
          return await testsIn(place.workTree, { ...input, testsDir: sourceDir }, sandboxWarning, trusted);
        } finally {
          trusted.dispose();
        }
      });
    },
  };

  async function setupIn(workspace: string, input: RunSetupInput): Promise<SetupResult> {
    const ctx = Context.current();
    const report = await runTestSuite({
      workspace,
      language: input.language,
      mode: deps.sandboxMode,
      command: { kind: 'command', command: input.command, source: 'option', label: input.command },
      dependencies: input.setup.dependencies,
      limits: limitsOf(input.setup.limits),
      ...(input.setup.env ? { env: input.setup.env } : {}),
      network: input.network,
      ...sandboxHeartbeat(),
      signal: ctx.cancellationSignal,
    });
    const ok = report.outcome === 'completed' && report.failed === 0 && report.errors === 0;
    const tail = report.output.trimEnd().split('\n').slice(-20).join('\n').slice(-3000);
    return {
      ok,
      outcome: report.outcome,
      message: report.message ? report.message.slice(0, 500) : null,
      outputTail: tail,
    };
  }

  async function testsIn(
    workspace: string,
    input: RunTestsInput,
    sandboxWarning: string | null,
    { baseConfig, baseTests }: Omit<TrustedTests, 'dispose'>,
  ): Promise<TestRunSummary> {
    const ctx = Context.current();
    let report: TestRunReport = await runTestSuite({
      workspace,
      language: input.language,
      mode: deps.sandboxMode,
      ...(input.testsDir && input.protectedPaths?.length
        ? {
            acceptance: {
              sourceDir: input.testsDir,
              files: input.protectedPaths,
              ...(baseConfig ? { baseConfig } : {}),
            },
          }
        : {}),
      ...(baseTests ? { baseTests } : {}),
      ...(input.setup
        ? {
            command: input.setup.command,
            dependencies: input.setup.dependencies,
            limits: limitsOf(input.setup.limits),
            ...(input.setup.env ? { env: input.setup.env } : {}),
          }
        : {}),
      ...sandboxHeartbeat(),
      signal: ctx.cancellationSignal,
    });
    const limit = limitHit(report, resolveLimits(input.setup ? limitsOf(input.setup.limits) : {}));
    // The agents read the report: a limit hit is named where they look first.
    if (limit) report = { ...report, message: `${limit}${report.message ? `; ${report.message}` : ''}` };
    const cannotRun = baselineDiagnosis(
      report,
      input.setup?.command.label ?? `aca's ${input.language} runner`,
      limit,
    );
    ctx.metricMeter
      .createHistogram('aca_test_run_duration', 'int', 'ms', 'Wall time of one sandboxed test run')
      .record(report.durationMs, { language: input.language, outcome: report.outcome });
    const ref = reportRef(input.runKey, input.attempt);
    // The report store may be a database that is slow to answer (or waits out an outage).
    const baseline = await withHeartbeats(5_000, async () => {
      await deps.reports.saveReport(ref, report);
      return loadBaseline(deps.reports, input.baselineRef);
    });
    const verdict = judgeAgainstBaseline(report, baseline, input.protectedPaths ?? []);
    const targets = input.targets ?? [];
    const failingTests = report.cases
      .filter((c) => c.status === 'failed' || c.status === 'error')
      .map((c) => c.name);
    return {
      ...(targets.length
        ? {
            targets: judgeTargets(
              targets,
              report.cases,
              report.outcome === 'completed',
              baseline?.outcome === 'completed' ? baseline.cases : undefined,
            ),
            unknownTargets: unknownTargets(targets, report.cases),
          }
        : {}),
      failingTests: [...new Set(failingTests)].slice(0, MAX_NAMED_REGRESSIONS),
      success: verdict.success,
      regressions: verdict.regressions.slice(0, MAX_NAMED_REGRESSIONS),
      regressionCount: verdict.regressions.length,
      outcome: report.outcome,
      passed: report.passed,
      failed: report.failed,
      errors: report.errors,
      passRate: report.passRate,
      message: report.message ? report.message.slice(0, 500) : null,
      reportRef: ref,
      durationMs: report.durationMs,
      sandboxWarning,
      ...(cannotRun ? { cannotRun } : {}),
    };
  }
}

async function loadBaseline(
  reports: ReportStore,
  ref: string | null | undefined,
): Promise<TestRunReport | null> {
  if (!ref) return null;
  const baseline = await reports.loadReport(ref);
  // Without its report the run could only guess which failures are old: fail loudly instead.
  if (!baseline)
    throw ApplicationFailure.nonRetryable(
      `the baseline report ${ref} is missing from the report store`,
      FAILURE_TYPES.reportMissing,
    );
  return baseline;
}
