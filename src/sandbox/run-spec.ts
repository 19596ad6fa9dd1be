import type { SandboxLimits } from './launch/limits';
import type { ProcessRunResult } from './launch/process-tree';
import type { RunnerContext, RunnerPaths, TestRunner } from './runners/runner';
import type { AcceptanceFiles } from './verdicts/acceptance';
import { prepareVerdict, type VerdictSpec } from './verdicts/verdict-process';
import type { Usage } from './workspace/workspace-ownership';

/** One process of a run: which runner, where its report goes, what it runs. */
export interface RunSpec {
  runner: TestRunner;
  outputDir: string;
  testPaths: string[];
  acceptanceTests: string[];
  excludedTests?: string[];
  /** Files mounted read-only over their workspace paths for this process (sandbox only). */
  covered?: AcceptanceFiles;
  /** Where this process's verdict reads the originals of the files it judges, on the worker. */
  originals?: string;
  /** For the verdict process: what it judges and how (verdicts/verdict-process.ts). */
  verdict?: VerdictSpec;
}

/** What one process of a run left behind, as the worker saw it. */
export interface RunOutcome {
  result: ProcessRunResult;
  seenWorkspace: string;
  usageBefore: Usage;
  usageAfter: Usage;
  /** A limit the run is known to have hit (the kernel's count of processes its cgroup killed). */
  limitHit?: string;
}

export type Launch = (run: RunSpec) => Promise<RunOutcome>;

export const reportNameOf = (runner: TestRunner): string => `report.${runner.reportExtension}`;

/** The runner's context for one process; the verdict process's setup is written for it here. */
export function contextFor(
  run: RunSpec,
  paths: RunnerPaths,
  limits: SandboxLimits,
  dependencies: RunnerContext['dependencies'],
  uid: number | undefined,
  originalsSeen: string,
): RunnerContext {
  const ctx: RunnerContext = {
    paths,
    limits,
    testPaths: run.testPaths,
    reportName: reportNameOf(run.runner),
    dependencies,
    acceptanceTests: run.acceptanceTests,
    ...(run.excludedTests ? { excludedTests: run.excludedTests } : {}),
  };
  if (!run.verdict) return ctx;
  return { ...ctx, verdict: prepareVerdict(run.verdict, run.outputDir, paths, uid, originalsSeen) };
}
