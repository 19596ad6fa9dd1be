import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DependencyFolder, TestCommandSpec } from '../shared/test-command';
import { LANGUAGES, type Language, type SandboxMode, type TestRunReport } from '../shared/types';
import {
  acceptanceTestFiles,
  expectedPythonTests,
  restoreAcceptanceCopies,
  type AcceptanceFiles,
} from './acceptance';
import { checkSandboxAvailable, bwrapTools, HOST_TOOL_ENV } from './availability';
import { bareRunnerPaths } from './bare-launch';
import { bwrapCommand, SANDBOX_PATHS } from './bwrap-launch';
import { hostDependencies, mountedDependencies } from './dependency-env';
import { checkDependencyFolders, prepareMountPoints, prepareScratchFolders } from './dependency-folders';
import { resolveLimits, type SandboxLimits } from './limits';
import { runProcessTree, type ProcessRunResult } from './process-tree';
import { acquireCgroupLauncher } from './cgroup-launchers';
import { withRlimits } from './rlimits';
import type { TestRunner } from './runner';
import { killUidProcesses } from './sandbox-user';
import { endLease, lendWorkspace, workspaceUsage, type Lease, type Usage } from './workspace-ownership';
import { isRoot } from './tools';
import { failureReport } from './report';
import { judgeRun, throwIfAborted } from './run-verdict';
import { selectRunner, type RunnerChoice } from './select-runner';
import { declaredJestSkips, type HonestSkip } from './jest-declared-skips';
import { withJestAcceptanceVerdict } from './jest-acceptance-verdict';
import { jestVerdictRunner } from './jest-verdict-runner';

export interface RunTestsOptions {
  /** Folder with the code and tests; the only host folder the tests may write. */
  workspace: string;
  /**
   * The host's network inside the sandbox: only for a setup command the user explicitly allowed
   * it (`--setup-network`), never for tests.
   */
  network?: boolean;
  language: Language;
  mode: SandboxMode;
  limits?: Partial<SandboxLimits>;
  /** Called about every 2 s while the suite runs (a Temporal activity heartbeat). */
  heartbeat?: () => void;
  /** Aborting kills the whole process tree; runTestSuite then rejects with an AbortError. */
  signal?: AbortSignal;
  /** Workspace-relative test files to run instead of discovering them. */
  testPaths?: string[];
  /** The user's acceptance tests: protected in the sandbox, and each must run and pass. */
  acceptance?: AcceptanceFiles;
  /**
   * What runs the tests (see test-command.ts); absent: aca's own runners, pytest on Debian's
   * interpreter for Python and aca's Jest otherwise.
   */
  command?: TestCommandSpec;
  /**
   * The repository's dependency folders (not in the worktree): mounted read-only at their place in
   * the workspace, their commands first on PATH. Without a sandbox they are used where they are.
   */
  dependencies?: DependencyFolder[];
}

export async function runTestSuite(opts: RunTestsOptions): Promise<TestRunReport> {
  const report = await runOnce(opts);
  return withJestAcceptanceVerdict(opts, report, (testPaths) =>
    runOnce({ ...opts, testPaths }, jestVerdictRunner),
  );
}

/** One test process: `forced` in place of the runner the options select. */
async function runOnce(opts: RunTestsOptions, forced?: TestRunner): Promise<TestRunReport> {
  const { language, mode } = opts;
  if (!(LANGUAGES as readonly string[]).includes(language)) {
    throw new Error(`unknown language ${JSON.stringify(language)} (expected one of ${LANGUAGES.join(', ')})`);
  }
  if (mode !== 'bwrap' && mode !== 'none') {
    throw new Error(`unknown sandbox mode ${JSON.stringify(mode)} (expected 'bwrap' or 'none')`);
  }
  const workspace = realWorkspace(opts.workspace);
  const testPaths = checkTestPaths(opts.testPaths ?? []);
  const limits = resolveLimits(opts.limits);
  const dependencies = checkDependencyFolders(opts.dependencies ?? []);
  throwIfAborted(opts.signal);

  const started = Date.now();
  const common = { sandbox: mode, output: '', cutBytes: 0 };
  const choice: RunnerChoice = forced
    ? { ok: true, runner: forced }
    : selectRunner(language, opts.command, dependencies);
  if (!choice.ok) return failureReport('collection_error', choice.message, { ...common, durationMs: 0 });
  const runner = choice.runner;
  const reportName = `report.${runner.reportExtension}`;
  const acceptance = opts.acceptance;
  // Copies damaged since the last run (only possible without the sandbox) are evidence too.
  const damagedBefore = acceptance ? restoreAcceptanceCopies(workspace, acceptance) : [];
  const expected = acceptance ? await expectations(runner, language, acceptance) : undefined;
  const acceptanceTests = acceptance ? acceptanceTestFiles(language, acceptance) : [];
  if (mode === 'bwrap') prepareMountPoints(workspace, dependencies);
  // Fresh for every run and outside the workspace: the report cannot be planted in advance.
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-run-'));
  fs.chmodSync(runDir, 0o755);
  const outputDir = path.join(runDir, 'output');
  fs.mkdirSync(outputDir, { mode: 0o755 });
  const judge = async (
    result: ProcessRunResult,
    seenWorkspace: string,
    usageBefore: Usage,
    handedBack?: Usage,
  ): Promise<TestRunReport> => {
    const damagedAfter = acceptance ? restoreAcceptanceCopies(workspace, acceptance) : [];
    const usageAfter = handedBack ?? (await workspaceUsage(workspace));
    return judgeRun({
      growth: { files: usageAfter.files - usageBefore.files, bytes: usageAfter.bytes - usageBefore.bytes },
      runner,
      workspaceSeenByRunner: seenWorkspace,
      reportPath: path.join(outputDir, reportName),
      result,
      limits,
      mode,
      signal: opts.signal,
      expected,
      damaged: [...new Set([...damagedBefore, ...damagedAfter])],
    });
  };

  try {
    if (mode === 'bwrap') {
      const availability = checkSandboxAvailable('bwrap');
      const tools = bwrapTools();
      if (!availability.ok || !tools) {
        const message = availability.ok ? 'bubblewrap is unavailable' : availability.message;
        return failureReport('sandbox_error', message, { ...common, durationMs: Date.now() - started });
      }
      const mounted = acceptance ? copyForSandbox(acceptance, path.join(runDir, 'acceptance')) : undefined;
      let lease: Lease | undefined;
      let launcher: ReturnType<typeof acquireCgroupLauncher> = null;
      let usageBefore: Usage;
      let result: ProcessRunResult;
      let usageAfter: Usage | undefined;
      try {
        if (isRoot()) {
          lease = await lendWorkspace(workspace);
          fs.chownSync(outputDir, lease.uid, lease.uid);
          launcher = acquireCgroupLauncher(limits.runMemoryBytes, limits.maxProcesses);
        }
        const uid = lease?.uid;
        usageBefore = lease?.before ?? (await workspaceUsage(workspace));
        const { argv, env } = runner.command({
          paths: SANDBOX_PATHS,
          limits,
          testPaths,
          reportName,
          dependencies: mountedDependencies(dependencies, SANDBOX_PATHS.workspace),
          acceptanceTests,
        });
        const { command, args } = bwrapCommand({
          tools,
          workspace,
          outputDir,
          ...(mounted ? { acceptance: mounted } : {}),
          dependencies,
          scratch: prepareScratchFolders(dependencies, runner.scratchDirs ?? []),
          needsNode: runner.needsNode,
          network: opts.network === true,
          limits,
          env,
          argv: withRlimits(argv, limits, {
            limitProcesses: true,
            addressSpaceHeadroomBytes: runner.addressSpaceHeadroomBytes,
          }),
          ...(uid === undefined ? {} : { uid }),
        });
        result = await runProcessTree({
          command,
          args,
          env: HOST_TOOL_ENV,
          cwd: workspace,
          wallTimeoutMs: limits.wallTimeoutMs,
          outputBytes: limits.outputBytes,
          ...pick(opts, 'heartbeat', 'signal'),
          ...(launcher ? { spawn: launcher.spawn } : {}),
        });
      } finally {
        // Only end the lease once nothing of the sandbox uid runs, so nothing can race the walk.
        if (lease) {
          await killUidProcesses(lease.uid);
          launcher?.release();
          usageAfter = await endLease(workspace, lease);
        }
      }
      return await judge(result, SANDBOX_PATHS.workspace, usageBefore, usageAfter);
    }

    const usageBefore = await workspaceUsage(workspace);
    const { paths, cleanup } = bareRunnerPaths(workspace, outputDir);
    try {
      const runId = randomBytes(8).toString('hex');
      const { argv, env } = runner.command({
        paths,
        limits,
        testPaths,
        reportName,
        dependencies: hostDependencies(dependencies),
        acceptanceTests,
      });
      const sweepTag = `ACA_SANDBOX_RUN=${runId}`;
      const wrapped = withRlimits(argv, limits, {
        limitProcesses: false,
        addressSpaceHeadroomBytes: runner.addressSpaceHeadroomBytes,
      });
      const result = await runProcessTree({
        command: wrapped[0],
        args: wrapped.slice(1),
        env: { ...env, ACA_SANDBOX_RUN: runId },
        cwd: workspace,
        wallTimeoutMs: limits.wallTimeoutMs,
        outputBytes: limits.outputBytes,
        sweepTag,
        ...pick(opts, 'heartbeat', 'signal'),
      });
      return await judge(result, workspace, usageBefore);
    } finally {
      cleanup();
    }
  } finally {
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

export interface Expectations {
  testFiles: string[];
  ids: string[] | undefined;
  /** The skipped acceptance tests that the acceptance files skip themselves. */
  honestSkip?: HonestSkip;
}

/**
 * What the acceptance tests must show in the run's cases. A runner whose case names do not start
 * with their file (`node --test`, a command's own report) cannot be held to that: for those only
 * the protection of the files themselves applies.
 */
async function expectations(
  runner: TestRunner,
  language: Language,
  acceptance: AcceptanceFiles,
): Promise<Expectations | undefined> {
  if (!runner.casesNamedByFile) return undefined;
  const testFiles = acceptanceTestFiles(language, acceptance);
  const ids = runner.kind === 'pytest' ? await expectedPythonTests(acceptance, testFiles) : undefined;
  if (runner.kind === 'jest') {
    return { testFiles, ids, honestSkip: await declaredJestSkips(acceptance.sourceDir, testFiles) };
  }
  return { testFiles, ids };
}

/**
 * The originals, copied for this run into a folder the sandbox user can read (the user's own
 * folder may be private to the worker): the sandbox mounts these copies read-only.
 */
function copyForSandbox(acceptance: AcceptanceFiles, dir: string): AcceptanceFiles {
  for (const file of acceptance.files) {
    const target = path.join(dir, file);
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    fs.copyFileSync(path.join(acceptance.sourceDir, file), target);
    fs.chmodSync(target, 0o444);
  }
  return { sourceDir: dir, files: acceptance.files };
}

function realWorkspace(workspace: string): string {
  if (typeof workspace !== 'string' || workspace === '')
    throw new Error('runTestSuite: workspace must be a non-empty path');
  let real: string;
  try {
    real = fs.realpathSync(workspace);
  } catch {
    throw new Error(`runTestSuite: workspace ${workspace} does not exist`);
  }
  if (!fs.statSync(real).isDirectory())
    throw new Error(`runTestSuite: workspace ${workspace} is not a directory`);
  if (real === '/') throw new Error('runTestSuite: the file system root cannot be a workspace');
  return real;
}

function checkTestPaths(testPaths: string[]): string[] {
  for (const p of testPaths) {
    const normal = path.posix.normalize(p);
    if (p === '' || path.isAbsolute(p) || normal === '..' || normal.startsWith('../') || p.startsWith('-')) {
      throw new Error(
        `runTestSuite: test path ${JSON.stringify(p)} must be relative to the workspace and inside it`,
      );
    }
  }
  return testPaths;
}

function pick<T extends object, K extends keyof T>(obj: T, ...keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (obj[key] !== undefined) out[key] = obj[key];
  return out;
}
