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
} from './verdicts/acceptance';
import { HOST_TOOL_ENV } from '../shared/executables';
import { pythonPathFolders, type TestEnv } from '../shared/test-env';
import { withRepositoryEnv } from './launch/repository-env';
import { checkSandboxAvailable, bwrapTools } from './launch/availability';
import { bareRunnerPaths } from './launch/bare-launch';
import { bwrapCommand, SANDBOX_PATHS } from './launch/bwrap-launch';
import { hostDependencies, mountedDependencies } from './launch/dependency-env';
import {
  checkDependencyFolders,
  prepareMountPoints,
  prepareScratchFolders,
} from './workspace/dependency-folders';
import { resolveLimits, type SandboxLimits } from './launch/limits';
import { runProcessTree, type ProcessRunResult } from './launch/process-tree';
import { acquireCgroupLauncher } from './launch/cgroup-launchers';
import { withRlimits } from './launch/rlimits';
import type { RunnerContext, RunnerPaths, TestRunner } from './runners/runner';
import { killUidProcesses } from './launch/sandbox-user';
import {
  endLease,
  lendWorkspace,
  workspaceUsage,
  type Lease,
  type Usage,
} from './workspace/workspace-ownership';
import { isRoot } from './launch/tools';
import { failureReport } from './verdicts/report';
import { mayHoldOtherTests, mergeReports, withoutFiles } from './verdicts/verdict-run';
import { judgeRun, throwIfAborted } from './verdicts/run-verdict';
import { selectRunner, type RunnerChoice } from './runners/select-runner';
import { declaredJestSkips, type HonestSkip } from './verdicts/jest-declared-skips';
import { withJestAcceptanceVerdict } from './verdicts/jest-acceptance-verdict';
import { jestVerdictRunner } from './verdicts/jest-verdict-runner';
import { baseHelpers, baseTestsHere, copyHelpers, type BaseTests } from './verdicts/base-tests';

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
  /** Called while the suite runs (a Temporal activity heartbeat), every `heartbeatEveryMs`. */
  heartbeat?: () => void;
  /** Default: DEFAULT_HEARTBEAT_EVERY_MS (launch/process-tree.ts). */
  heartbeatEveryMs?: number;
  /** Aborting kills the whole process tree; runTestSuite then rejects with an AbortError. */
  signal?: AbortSignal;
  /** Workspace-relative test files to run instead of discovering them. */
  testPaths?: string[];
  /** The user's acceptance tests: protected in the sandbox, and each must run and pass. */
  acceptance?: AcceptanceFiles;
  /**
   * The repository's tests as a trusted commit has them, judged in the verdict process from those
   * versions (pytest only; see verdicts/base-tests.ts).
   */
  baseTests?: BaseTests;
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
  /** The repository's own variables (see launch/repository-env.ts); absent: none. */
  env?: TestEnv;
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
  const acceptance = opts.acceptance;
  // Copies damaged since the last run (only possible without the sandbox) are evidence too.
  const damagedBefore = acceptance ? restoreAcceptanceCopies(workspace, acceptance) : [];
  const acceptanceTests = acceptance ? acceptanceTestFiles(language, acceptance) : [];
  // The repository's own tests judged from the trusted commit's versions: pytest's verdict only.
  const base =
    opts.baseTests && runner.kind === 'pytest' ? withoutAcceptance(opts.baseTests, acceptance) : undefined;
  // Read while the tests run: only judging needs it.
  const python =
    acceptance && runner.kind === 'pytest'
      ? expectedPythonTests(acceptance.sourceDir, acceptanceTests)
      : Promise.resolve(undefined);
  const baseSkips = base ? expectedPythonTests(base.sourceDir, base.files) : Promise.resolve(undefined);
  const jestSkips =
    acceptance && runner.kind === 'jest'
      ? declaredJestSkips(acceptance.sourceDir, acceptanceTests)
      : Promise.resolve(undefined);
  // Awaited when judging; a failure there must not go unhandled if the run ends first.
  jestSkips.catch(() => undefined);
  const expectations = async (): Promise<Expectations | undefined> => {
    if (!acceptance || !runner.casesNamedByFile) return undefined;
    const honestSkip = await jestSkips;
    return { testFiles: acceptanceTests, ids: (await python)?.ids, ...(honestSkip ? { honestSkip } : {}) };
  };
  // The acceptance verdict comes from a process of its own where the runner has one.
  const key = randomBytes(32);
  const maySkip = new Set<string>();
  const verdictRunner =
    (acceptance || base) &&
    runner.casesNamedByFile &&
    runner.resultsChannel &&
    runner.verdict &&
    acceptanceTests.length + (base?.files.length ?? 0) > 0
      ? runner.verdict({ key, maySkip, repositoryFiles: new Set(base?.files ?? []) })
      : undefined;
  if (mode === 'bwrap') prepareMountPoints(workspace, dependencies);
  // Fresh for every run and outside the workspace: the report cannot be planted in advance.
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-run-'));
  fs.chmodSync(runDir, 0o755);
  let damaged = damagedBefore;

  try {
    let launch: Launch;
    if (mode === 'bwrap') {
      const availability = checkSandboxAvailable('bwrap');
      const tools = bwrapTools();
      if (!availability.ok || !tools) {
        const message = availability.ok ? 'bubblewrap is unavailable' : availability.message;
        return failureReport('sandbox_error', message, { ...common, durationMs: Date.now() - started });
      }
      launch = (run) => runSandboxed({ opts, workspace, limits, dependencies, tools, ...run });
    } else {
      launch = (run) => runBare({ opts, workspace, limits, dependencies, ...run });
    }
    const judged = async (
      run: RunSpec,
      expectedHere: () => Promise<Expectations | undefined>,
    ): Promise<TestRunReport> => {
      const outcome = await launch(run);
      const expected = await expectedHere();
      for (const id of (await python)?.maySkip ?? []) maySkip.add(id);
      for (const id of (await baseSkips)?.maySkip ?? []) maySkip.add(id);
      const damagedAfter = acceptance ? restoreAcceptanceCopies(workspace, acceptance) : [];
      damaged = [...new Set([...damaged, ...damagedAfter])];
      const report = await judgeRun({
        growth: {
          files: outcome.usageAfter.files - outcome.usageBefore.files,
          bytes: outcome.usageAfter.bytes - outcome.usageBefore.bytes,
        },
        runner: run.runner,
        workspaceSeenByRunner: outcome.seenWorkspace,
        reportPath: path.join(run.outputDir, reportNameOf(run.runner)),
        result: outcome.result,
        limits,
        mode,
        signal: opts.signal,
        expected,
        damaged,
      });
      if (!outcome.limitHit) return report;
      return {
        ...report,
        message: `${outcome.limitHit}${report.message ? `; ${report.message}` : ''}`,
        ...(report.outcome === 'completed' ? {} : { environment: outcome.limitHit }),
      };
    };

    const acceptanceCovered =
      acceptance && mode === 'bwrap'
        ? copyForSandbox(acceptance, path.join(runDir, 'acceptance'))
        : undefined;
    if (!verdictRunner) {
      const run = {
        runner,
        outputDir: outputFolder(runDir, 'output'),
        testPaths,
        acceptanceTests,
        covered: acceptanceCovered,
      };
      return await judged(run, expectations);
    }
    // The run's own tests (the Tester's, the repository's new or changed files) run as before,
    // without the files the verdict judges; then those alone in the verdict process. No second
    // process starts when nothing else is there to run.
    const unchangedBase = base ? baseTestsHere(workspace, base).unchanged : [];
    const judgedElsewhere = [...acceptanceTests, ...unchangedBase];
    const mainPaths = testPaths.filter((p) => !judgedElsewhere.includes(p));
    const needsMain =
      testPaths.length > 0
        ? mainPaths.length > 0
        : mayHoldOtherTests(workspace, [...(acceptance?.files ?? []), ...unchangedBase], dependencies);
    const mainRun = {
      runner,
      outputDir: outputFolder(runDir, 'output'),
      testPaths: mainPaths,
      acceptanceTests,
      excludedTests: judgedElsewhere,
      covered: acceptanceCovered,
    };
    const main = needsMain ? await judged(mainRun, () => Promise.resolve(undefined)) : null;
    if (main && main.outcome !== 'completed' && main.outcome !== 'no_tests') return main;
    // Read once the run's own process is gone: a base test file it deleted or replaced is not judged.
    const basePresent = base ? baseTestsHere(workspace, base).present : [];
    const gone = base ? base.files.filter((file) => !basePresent.includes(file)) : [];
    if (acceptanceTests.length + basePresent.length === 0) {
      // Nothing left for the verdict (pytest given no file would collect the whole workspace).
      const own = main ?? (await judged(mainRun, () => Promise.resolve(undefined)));
      return withoutFiles(own, gone);
    }
    const originals = verdictOriginals(path.join(runDir, 'originals'), acceptance, base, basePresent);
    const baseConfig = acceptance?.baseConfig ?? base?.config;
    const verdict = await judged(
      {
        runner: verdictRunner,
        outputDir: outputFolder(runDir, 'verdict'),
        testPaths: [],
        acceptanceTests,
        covered: mode === 'bwrap' ? originals : undefined,
        originals: originals.sourceDir,
        verdict: {
          key,
          tests: [...acceptanceTests, ...basePresent.filter((file) => !base?.run || base.run.includes(file))],
          modules: basePresent.filter((file) => base?.run && !base.run.includes(file)),
          repository: basePresent,
          support: (acceptance?.files ?? []).filter((f) => path.posix.basename(f) === 'conftest.py'),
          importPaths: [...new Set([...(base?.importPaths ?? []), ...pythonPathFolders(opts.env)])],
          helpers: {
            sourceDir: base?.sourceDir ?? '',
            files: base ? baseHelpers(base, acceptance?.files ?? []) : [],
          },
          ...(baseConfig ? { base: baseConfig } : {}),
        },
      },
      async () => {
        const expected = await expectations();
        return expected ? { ...expected, honestSkip: () => true } : undefined;
      },
    );
    return mergeReports(main, verdict, acceptanceTests, gone);
  } finally {
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

export interface Expectations {
  testFiles: string[];
  ids: string[] | undefined;
  /**
   * The skipped acceptance tests that are the user's own results: those the acceptance files skip
   * themselves (Jest), or every one after the verdict process judged each skip (pytest).
   */
  honestSkip?: HonestSkip;
}

/** One process of a run: which runner, where its report goes, what it runs. */
interface RunSpec {
  runner: TestRunner;
  outputDir: string;
  testPaths: string[];
  acceptanceTests: string[];
  excludedTests?: string[];
  /** Files mounted read-only over their workspace paths for this process (sandbox only). */
  covered?: AcceptanceFiles;
  /** Where this process's verdict reads the originals of the files it judges, on the worker. */
  originals?: string;
  /**
   * For the verdict process: its key, the files it judges, the conftest.py files given with the
   * acceptance tests, the folders it imports from after the workspace root, and the trusted
   * commit's configuration it loads.
   */
  verdict?: {
    key: Buffer;
    tests: string[];
    support: string[];
    modules: string[];
    repository: string[];
    importPaths: string[];
    /** The trusted commit's helper modules in its test folders, imported from their originals. */
    helpers: { sourceDir: string; files: string[] };
    base?: NonNullable<AcceptanceFiles['baseConfig']>;
  };
}

interface RunOutcome {
  result: ProcessRunResult;
  seenWorkspace: string;
  usageBefore: Usage;
  usageAfter: Usage;
  /** A limit the run is known to have hit (the kernel's count of processes its cgroup killed). */
  limitHit?: string;
}

type Launch = (run: RunSpec) => Promise<RunOutcome>;

const reportNameOf = (runner: TestRunner): string => `report.${runner.reportExtension}`;
const KEY_FILE = 'verdict.key';
const BASE_FOLDER = 'base';
const HELPERS_FOLDER = 'helpers';

function outputFolder(runDir: string, name: string): string {
  const dir = path.join(runDir, name);
  fs.mkdirSync(dir, { mode: 0o755 });
  return dir;
}

/**
 * The runner's context for one process. The verdict process finds its key in its output folder
 * (fresh for this run, written by the worker only) and removes it before anything of the workspace
 * runs: the key never passes through an environment or a command line another process can read.
 */
function contextFor(
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
  const keyFile = path.join(run.outputDir, KEY_FILE);
  fs.writeFileSync(keyFile, run.verdict.key, { mode: 0o400 });
  if (uid !== undefined) fs.chownSync(keyFile, uid, uid);
  const seen =
    (root: string) =>
    (file: string): [string, string, string] => [
      file,
      path.posix.join(paths.workspace, file),
      path.posix.join(root, file),
    ];
  // The base commit's configuration, copied into a folder of the output folder that only the
  // worker can write; the verdict process reads it before anything of the workspace runs.
  const base = run.verdict.base;
  const baseSeen = path.posix.join(paths.output, BASE_FOLDER);
  if (base) {
    for (const file of base.files) {
      const target = path.join(run.outputDir, BASE_FOLDER, file);
      fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
      fs.copyFileSync(path.join(base.sourceDir, file), target);
      fs.chmodSync(target, 0o444);
    }
  }
  const helpers = run.verdict.helpers;
  copyHelpers(helpers, path.join(run.outputDir, HELPERS_FOLDER));
  const conftests = [
    ...(base?.files ?? [])
      .filter((file) => path.posix.basename(file) === 'conftest.py' && !run.verdict!.support.includes(file))
      .map(seen(baseSeen)),
    ...run.verdict.support.map(seen(originalsSeen)),
  ];
  return {
    ...ctx,
    verdict: {
      tests: run.verdict.tests.map(seen(originalsSeen)),
      // Folders above first, as pytest loads them.
      support: conftests.sort((a, b) => a[0].split('/').length - b[0].split('/').length),
      ini: base?.ini ? path.posix.join(baseSeen, base.ini) : null,
      keyFile: path.posix.join(paths.output, KEY_FILE),
      importPaths: run.verdict.importPaths.map((folder) => path.posix.join(paths.workspace, folder)),
      modules: run.verdict.modules.map(seen(originalsSeen)),
      repository: run.verdict.repository,
      helpers: helpers.files.map(seen(path.posix.join(paths.output, HELPERS_FOLDER))),
    },
  };
}

interface LaunchInput extends RunSpec {
  opts: RunTestsOptions;
  workspace: string;
  limits: SandboxLimits;
  dependencies: DependencyFolder[];
}

async function runSandboxed(
  input: LaunchInput & { tools: NonNullable<ReturnType<typeof bwrapTools>> },
): Promise<RunOutcome> {
  const { opts, workspace, limits, dependencies, tools, covered, runner, outputDir } = input;
  let lease: Lease | undefined;
  let launcher: ReturnType<typeof acquireCgroupLauncher> = null;
  let usageBefore: Usage;
  let result: ProcessRunResult;
  let usageAfter: Usage | undefined;
  let oomKills = 0;
  try {
    if (isRoot()) {
      lease = await lendWorkspace(workspace);
      fs.chownSync(outputDir, lease.uid, lease.uid);
      launcher = acquireCgroupLauncher(limits.runMemoryBytes, limits.maxProcesses);
    }
    const uid = lease?.uid;
    usageBefore = lease?.before ?? (await workspaceUsage(workspace));
    // Inside the sandbox the acceptance files at their workspace paths are the originals, mounted.
    const ctx = contextFor(
      input,
      SANDBOX_PATHS,
      limits,
      mountedDependencies(dependencies, SANDBOX_PATHS.workspace),
      uid,
      SANDBOX_PATHS.workspace,
    );
    const { argv, env: runnerEnv } = runner.command(ctx);
    const env = withRepositoryEnv(runnerEnv, opts.env, ctx.paths.workspace);
    const { command, args } = bwrapCommand({
      tools,
      workspace,
      outputDir,
      ...(covered ? { acceptance: covered } : {}),
      dependencies,
      scratch: prepareScratchFolders(dependencies, runner.scratchDirs ?? []),
      needsNode: runner.needsNode,
      network: opts.network === true,
      limits,
      env,
      argv: withRlimits(argv, limits, {
        limitProcesses: true,
        addressSpaceHeadroomBytes: runner.addressSpaceHeadroomBytes,
        memoryInCgroup: launcher !== null,
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
      ...pick(opts, 'heartbeat', 'heartbeatEveryMs', 'signal'),
      ...(launcher ? { spawn: launcher.spawn } : {}),
    });
    oomKills = launcher?.oomKills() ?? 0;
  } finally {
    // Only end the lease once nothing of the sandbox uid runs, so nothing can race the walk.
    if (lease) {
      await killUidProcesses(lease.uid);
      launcher?.release();
      usageAfter = await endLease(workspace, lease);
    }
  }
  return {
    result,
    seenWorkspace: SANDBOX_PATHS.workspace,
    usageBefore,
    usageAfter: usageAfter ?? (await workspaceUsage(workspace)),
    ...(oomKills > 0
      ? {
          limitHit: `the run's memory limit of ${Math.round(limits.runMemoryBytes / 1024 / 1024)} MiB was hit: the kernel killed ${oomKills} of its processes (--memory, or limits.memoryMiB in .aca.json)`,
        }
      : {}),
  };
}

async function runBare(input: LaunchInput): Promise<RunOutcome> {
  const { opts, workspace, limits, dependencies, runner, outputDir } = input;
  const usageBefore = await workspaceUsage(workspace);
  const { paths, cleanup } = bareRunnerPaths(workspace, outputDir);
  try {
    const runId = randomBytes(8).toString('hex');
    // Without a sandbox nothing covers the copies: the verdict process reads the originals.
    const originals = input.originals ?? opts.acceptance?.sourceDir ?? workspace;
    const ctx = contextFor(input, paths, limits, hostDependencies(dependencies), undefined, originals);
    const { argv, env: runnerEnv } = runner.command(ctx);
    const env = withRepositoryEnv(runnerEnv, opts.env, ctx.paths.workspace);
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
      ...pick(opts, 'heartbeat', 'heartbeatEveryMs', 'signal'),
    });
    return { result, seenWorkspace: workspace, usageBefore, usageAfter: await workspaceUsage(workspace) };
  } finally {
    cleanup();
  }
}

/**
 * The originals, copied for this run into a folder the sandbox user can read (the user's own
 * folder may be private to the worker): the sandbox mounts these copies read-only.
 */
function copyForSandbox(
  acceptance: Pick<AcceptanceFiles, 'sourceDir' | 'files'>,
  dir: string,
): AcceptanceFiles {
  for (const file of acceptance.files) {
    const target = path.join(dir, file);
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    fs.copyFileSync(path.join(acceptance.sourceDir, file), target);
    fs.chmodSync(target, 0o444);
  }
  return { sourceDir: dir, files: acceptance.files };
}

/** Every file the verdict process judges, as its original, in one folder: what covers the workspace's. */
function verdictOriginals(
  dir: string,
  acceptance: AcceptanceFiles | undefined,
  base: BaseTests | undefined,
  basePresent: string[],
): AcceptanceFiles {
  if (acceptance) copyForSandbox(acceptance, dir);
  if (base) copyForSandbox({ sourceDir: base.sourceDir, files: basePresent }, dir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  return { sourceDir: dir, files: [...(acceptance?.files ?? []), ...basePresent] };
}

/** The base tests less the acceptance files, which are judged as such. */
function withoutAcceptance(base: BaseTests, acceptance: AcceptanceFiles | undefined): BaseTests {
  const taken = new Set(acceptance?.files ?? []);
  return { ...base, files: base.files.filter((file) => !taken.has(file)) };
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
