import * as path from 'node:path';
import type { TestRunnerKind } from '../../shared/test-command';
import { dependencyEnv, dependencySearchPath, type SeenDependency } from '../launch/dependency-env';
import type { SandboxLimits } from '../launch/limits';
import type { ParsedReport } from '../verdicts/report';
import type { StreamResult } from '../verdicts/result-check';

/** Paths as the test process sees them: fixed ones inside bwrap, host ones when bare. */
export interface RunnerPaths {
  workspace: string;
  /** Folder with transform.js and node_modules (jest, typescript). */
  runnerDir: string;
  /** The node binary; alone in its folder inside the sandbox, so that folder can go on PATH. */
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
  /** The repository's dependency folders, where the test process finds them. */
  dependencies: SeenDependency[];
  /** Workspace-relative acceptance test files (`--tests`) the runner holds to a stricter check. */
  acceptanceTests?: string[];
  /**
   * Workspace-relative test files this run leaves out: the acceptance tests, when a verdict process
   * of their own runs them (see `StreamingRunner.verdict`).
   */
  excludedTests?: string[];
  /**
   * For a verdict process: the acceptance test files and the conftest.py files it loads (each as
   * relative path, path in the workspace, path of the original it is read from), the pytest
   * configuration file it reads (the base commit's, else aca's), and the key file it signs with.
   */
  verdict?: {
    tests: [string, string, string][];
    support: [string, string, string][];
    ini: string | null;
    keyFile: string;
    /** Folders put on the import path after the workspace root, as `PYTHONPATH` would. */
    importPaths: string[];
    /** Trusted test files not run, whose test classes the files run may inherit (as `tests`). */
    modules: [string, string, string][];
    /** The repository's own test files among them (see VerdictExpectations.repositoryFiles). */
    repository: string[];
    /** The trusted commit's helper modules in its test folders, imported from their originals. */
    helpers: [string, string, string][];
  };
}

/** What the worker knows of the acceptance tests before a verdict process runs them. */
export interface VerdictExpectations {
  /** The key the verdict process signs its records with (given to it in a file it removes). */
  key: Buffer;
  /**
   * Test ids (`file::name`, without parameters) whose original asks for a skip or an expected
   * failure (a mark, or a skip call in the test or its file): only these may end skipped by pytest.
   */
  maySkip: ReadonlySet<string>;
  /**
   * The repository's own test files judged from a trusted commit (verdicts/base-tests.ts): a sign
   * that one of their tests did not really pass makes that test an error rather than the whole
   * run tampered, so that a test the verdict cannot vouch for at the base commit stays a known
   * failure there instead of stopping every run on the repository.
   */
  repositoryFiles?: ReadonlySet<string>;
}

interface RunnerBase {
  kind: TestRunnerKind;
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
  /**
   * Whether case names start with the test file's workspace path (`file::…`), so that the user's
   * acceptance test files can be checked for having run.
   */
  casesNamedByFile: boolean;
  /**
   * Workspace-relative folders inside dependency folders that the runner must write to. In the
   * sandbox each becomes a private tmpfs, so the dependency folder itself stays read-only.
   */
  scratchDirs?: string[];
  command(ctx: RunnerContext): { argv: string[]; env: Record<string, string> };
  /**
   * Reads the runner's report. `exitCode` is the runner's own, for signals the
   * report cannot carry; `workspace` is the workspace path the runner saw, to make
   * test file names relative.
   */
  parse(reportText: string, run: { exitCode: number | null; workspace: string }): ParsedReport;
}

/** A runner that loads aca's plugin or reporter, which streams each outcome out as it happens. */
export interface StreamingRunner extends RunnerBase {
  resultsChannel: true;
  /** Reads what aca's plugin sent on the results channel, with cases named as the final report names them. */
  readStream(text: string, workspace: string): StreamResult;
  /** The name `parse` gives the case that the stream calls `name`. */
  reportKey(name: string): string;
  /** Why the runner's exit status contradicts the streamed results, or null when it does not. */
  exitContradiction(exitCode: number, stream: StreamResult): string | null;
  /**
   * The runner of the verdict process, where this runner has one: the acceptance tests alone, in a
   * process of their own that nothing written during the run configures, whose results the code
   * under test cannot forge (verdicts/verdict-process.ts). Its command gets `RunnerContext.verdict`.
   */
  verdict?(expectations: VerdictExpectations): StreamingRunner;
}

/**
 * A runner of the project's own choosing (its vitest, mocha, `node --test`, or a command line)
 * that cannot load aca's plugin: its report file and exit status are all there is.
 */
export interface ReportOnlyRunner extends RunnerBase {
  resultsChannel: false;
  /** The result of a run that wrote no report, where the runner has one (a command's exit status). */
  withoutReport?(run: { exitCode: number | null; exitSignal: string | null; output: string }): ParsedReport;
}

export type TestRunner = StreamingRunner | ReportOnlyRunner;

/**
 * The environment every runner starts from: enough for python and node, nothing of the worker's.
 * The dependency folders' `bin` folders come first on PATH, then node's own folder (for
 * `#!/usr/bin/env node` scripts and npm), then the system's.
 */
export function baseEnv(paths: RunnerPaths, dependencies: SeenDependency[] = []): Record<string, string> {
  return {
    PATH: dependencySearchPath(dependencies, [
      path.posix.dirname(paths.node),
      '/usr/local/bin:/usr/bin:/bin',
    ]),
    HOME: paths.tmp,
    TMPDIR: paths.tmp,
    USER: 'sandbox',
    LOGNAME: 'sandbox',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    CI: '1',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    ...dependencyEnv(dependencies),
  };
}

/** Where the test process finds the dependency folder at `relative` (select-runner.ts made sure it is there). */
export function dependencyPath(ctx: RunnerContext, relative: string): string {
  const found = ctx.dependencies.find((dep) => dep.relative === relative);
  if (!found) throw new Error(`the dependency folder ${relative} is not part of this run`);
  return found.path;
}
