import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pythonPathFolders } from '../shared/test-env';
import { LANGUAGES, type TestRunReport } from '../shared/types';
import { checkSandboxAvailable, bwrapTools } from './launch/availability';
import { runBare, runSandboxed } from './launch/launch-run';
import { resolveLimits } from './launch/limits';
import type { RunTestsOptions } from './run-options';
import { reportNameOf, type Launch, type RunSpec } from './run-spec';
import type { TestRunner } from './runners/runner';
import { selectRunner, type RunnerChoice } from './runners/select-runner';
import { acceptanceTestFiles, expectedPythonTests, restoreAcceptanceCopies } from './verdicts/acceptance';
import { baseTestsHere } from './verdicts/base-tests';
import { withJestAcceptanceVerdict } from './verdicts/jest-acceptance-verdict';
import { declaredJestSkips } from './verdicts/jest-declared-skips';
import { jestVerdictRunner } from './verdicts/jest-verdict-runner';
import { copyForSandbox, verdictOriginals, withoutAcceptance } from './verdicts/originals';
import { failureReport } from './verdicts/report';
import { judgeRun, throwIfAborted, type Expectations } from './verdicts/run-verdict';
import { verdictSpec } from './verdicts/verdict-process';
import { mayHoldOtherTests, mergeReports, withoutFiles } from './verdicts/verdict-run';
import { checkDependencyFolders, prepareMountPoints } from './workspace/dependency-folders';

export type { RunTestsOptions } from './run-options';

/**
 * One test run, start to verdict: the run's own tests in one process, then the files the verdict
 * judges (the acceptance tests, the base commit's tests) in a process of their own where the
 * runner has one (verdicts/verdict-process.ts), each judged against what the worker saw.
 */
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
    const verdict = await judged(
      {
        runner: verdictRunner,
        outputDir: outputFolder(runDir, 'verdict'),
        testPaths: [],
        acceptanceTests,
        covered: mode === 'bwrap' ? originals : undefined,
        originals: originals.sourceDir,
        verdict: verdictSpec({
          key,
          acceptance,
          acceptanceTests,
          base,
          basePresent,
          pythonPath: pythonPathFolders(opts.env),
        }),
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

function outputFolder(runDir: string, name: string): string {
  const dir = path.join(runDir, name);
  fs.mkdirSync(dir, { mode: 0o755 });
  return dir;
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
