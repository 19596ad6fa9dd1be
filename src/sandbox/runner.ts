import type { SandboxLimits } from './limits';
import type { ParsedReport } from './report';
import type { StreamResult } from './result-check';

/** Paths as the test process sees them: fixed ones inside bwrap, host ones when bare. */
export interface RunnerPaths {
  workspace: string;
  /** Folder with transform.js and node_modules (jest, typescript). */
  runnerDir: string;
  node: string;
  /** Private scratch folder, also HOME: nothing is written to a real home. */
  tmp: string;
  /** Folder the runner writes its report to: fresh for every run, outside the workspace. */
  output: string;
}

export interface RunnerContext {
  paths: RunnerPaths;
  limits: SandboxLimits;
  /** Workspace-relative test files to run; empty means discover. */
  testPaths: string[];
  /** File name (in `paths.output`) the runner writes its structured report to. */
  reportName: string;
}

export interface TestRunner {
  /** Whether the run needs node and the project's node_modules mounted. */
  needsNode: boolean;
  /**
   * Address space added to `memoryBytes` for RLIMIT_AS. V8 reserves ~850 MiB of
   * address space it never touches (code range, heap cages, thread stacks), so
   * node cannot even start under a 1 GiB RLIMIT_AS; its real heap is capped by
   * --max-old-space-size instead.
   */
  addressSpaceHeadroomBytes: number;
  reportExtension: string;
  command(ctx: RunnerContext): { argv: string[]; env: Record<string, string> };
  /**
   * Reads the runner's report. `exitCode` is the runner's own, for signals the
   * report cannot carry; `workspace` is the workspace path the runner saw, to make
   * test file names relative.
   */
  parse(reportText: string, run: { exitCode: number | null; workspace: string }): ParsedReport;
  /** Reads what aca's plugin sent on the results channel, with cases named as the final report names them. */
  readStream(text: string, workspace: string): StreamResult;
  /** The name `parse` gives the case that the stream calls `name`. */
  reportKey(name: string): string;
  /** Why the runner's exit status contradicts the streamed results, or null when it does not. */
  exitContradiction(exitCode: number, stream: StreamResult): string | null;
}

/** The environment every runner starts from: enough for python and node, nothing of the worker's. */
export function baseEnv(paths: RunnerPaths): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: paths.tmp,
    TMPDIR: paths.tmp,
    USER: 'sandbox',
    LOGNAME: 'sandbox',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    CI: '1',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
}
