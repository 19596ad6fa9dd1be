import * as path from 'node:path';
import type { TestCaseResult } from '../../shared/types';
import type { ParsedReport } from '../verdicts/report';
import { combinePhases, type StreamResult } from '../verdicts/result-check';
import { parseRecords, PytestRecord } from '../verdicts/results-channel';
import {
  baseEnv,
  dependencyPath,
  type RunnerContext,
  type StreamingRunner,
  type VerdictExpectations,
} from './runner';
import { readJunitCases } from '../verdicts/junit-xml';
import { junitCaseResult } from '../verdicts/junit-cases';
import { shippedFile, type ShippedFile } from '../shipped-files';
import { readVerdictStream } from '../verdicts/pytest-verdict-stream';

/** Debian's interpreter, not whatever python is first on the worker's PATH (pyenv shims live in /root). */
/** What the run's pytest and the verdict's share: the report, its names and the exit status check. */
const pytestReading = {
  kind: 'pytest',
  resultsChannel: true,
  needsNode: false,
  addressSpaceHeadroomBytes: 0,
  reportExtension: 'xml',
  casesNamedByFile: true,
  parse(reportText: string, { exitCode }: { exitCode: number | null }) {
    return parseJunit(reportText, exitCode);
  },
  reportKey: junitName,
  exitContradiction,
} as const satisfies Omit<StreamingRunner, 'command' | 'readStream'>;

export const PYTHON = '/usr/bin/python3';

/** pytest's exit codes that mean "the run itself broke" rather than "tests failed". */
const PYTEST_TESTS_FAILED = 1;
const PYTEST_INTERRUPTED = 2;
const PYTEST_INTERNAL_ERROR = 3;
const PYTEST_USAGE_ERROR = 4;

/** aca's pytest with Debian's interpreter. */
export const pytestRunner = makePytestRunner(null);

/**
 * aca's pytest driver, run by the interpreter of the virtual environment at `venv` (its path
 * relative to the repository), or by Debian's when null. A venv's `bin/python` is normally a link
 * to a system interpreter; started by the venv's path it finds the venv's pyvenv.cfg, and with it
 * the venv's site-packages.
 */
export function makePytestRunner(venv: string | null): StreamingRunner {
  const interpreter = (ctx: RunnerContext): Interpreter =>
    venv === null
      ? { python: PYTHON, autoloadPlugins: false }
      : { python: path.posix.join(dependencyPath(ctx, venv), 'bin', 'python'), autoloadPlugins: true };
  return {
    ...pytestReading,
    command(ctx) {
      return pytestCommand(ctx, interpreter(ctx));
    },
    readStream: readPytestStream,
    verdict(expectations) {
      return makeVerdictRunner(interpreter, expectations);
    },
  };
}

function exitContradiction(exitCode: number, stream: StreamResult): string | null {
  const failing = stream.cases.filter((c) => c.status === 'failed' || c.status === 'error').length;
  if (exitCode === 0 && (failing > 0 || stream.collectionErrors.length > 0))
    return `pytest exited 0, but ${failing} tests failed and ${stream.collectionErrors.length} files did not load`;
  if (exitCode === PYTEST_TESTS_FAILED && failing === 0)
    return 'pytest exited with "tests failed", but no test failed';
  return null;
}

/**
 * The verdict process's `-c` text: its parts first (each defines functions only), then the launcher
 * that installs and runs them. Being one text, no part is imported, so nothing on `sys.path` can
 * stand in for one.
 */
const VERDICT_PARTS = [
  'pytestVerdictValues',
  'pytestVerdictNames',
  'pytestVerdictImports',
  'pytestVerdictCode',
  'pytestVerdictChannel',
  'pytestVerdictProc',
  'pytestVerdictWatch',
  'pytestVerdictPlugin',
  'pytestVerdictLauncher',
] as const satisfies readonly ShippedFile[];

function verdictLauncherText(): string {
  return VERDICT_PARTS.map((part) => shippedFile(part)).join('\n');
}

/**
 * pytest on the acceptance test files alone (verdicts/python/pytest_verdict.py): no conftest.py but the ones
 * given with them, no configuration file but aca's, no `addopts`, no plugin the run could have
 * written; Python isolated (`-I`: no working folder, `PYTHONPATH` or user site on `sys.path`, so no
 * sitecustomize or `.pth` of the workspace), its records signed.
 */
function makeVerdictRunner(
  interpreter: (ctx: RunnerContext) => Interpreter,
  expectations: VerdictExpectations,
): StreamingRunner {
  return {
    ...pytestReading,
    command(ctx) {
      const { python, autoloadPlugins } = interpreter(ctx);
      const { paths, reportName, dependencies, verdict } = ctx;
      if (!verdict) throw new Error('a verdict run needs its acceptance files and key file');
      const setup = {
        keyFile: verdict.keyFile,
        tests: verdict.tests,
        support: verdict.support,
        modules: verdict.modules,
        repository: verdict.repository,
        paths: verdict.importPaths,
        helpers: verdict.helpers,
      };
      const argv = [
        python,
        '-I',
        '-B',
        '-u',
        '-c',
        verdictLauncherText(),
        JSON.stringify(setup),
        '-q',
        '--color=no',
        // The base commit's configuration in a run on a repository (its settings, not its addopts).
        '-c',
        verdict.ini ?? path.posix.join(paths.runnerDir, 'pytest.ini'),
        `--rootdir=${paths.workspace}`,
        `--confcutdir=${paths.workspace}`,
        '--noconftest',
        '-p',
        'no:cacheprovider',
        '-o',
        'addopts=',
        '-o',
        'junit_family=xunit2',
        `--junitxml=${path.posix.join(paths.output, reportName)}`,
        '--',
        ...verdict.tests.map(([rel]) => rel),
      ];
      return {
        argv,
        env: {
          ...baseEnv(paths, dependencies),
          ...(autoloadPlugins ? {} : { PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' }),
        },
      };
    },
    readStream: (text) => readVerdictStream(text, expectations),
  };
}

interface Interpreter {
  python: string;
  /**
   * Whether pytest loads the plugins installed beside it. Debian's are the worker's, not part of
   * the user's suite; a project's venv is the user's own (read-only in the sandbox), and its
   * plugins (pytest-asyncio, pytest-django…) are part of how its tests run.
   */
  autoloadPlugins: boolean;
}

function pytestCommand(
  { paths, testPaths, reportName, dependencies, acceptanceTests = [], excludedTests = [] }: RunnerContext,
  { python, autoloadPlugins }: Interpreter,
): { argv: string[]; env: Record<string, string> } {
  const argv = [
    python,
    // Not `-m pytest`: nothing is imported from the workspace until pytest and aca's plugin have
    // loaded (verdicts/python/pytest_launcher.py); then the workspace goes first on sys.path, as with `-m`.
    '-c',
    shippedFile('pytestLauncher'),
    '-q',
    '--color=no',
    // aca's configuration, not the workspace's: nothing written there can add -k, --deselect
    // or other options that make the user's tests vanish.
    '-c',
    path.posix.join(paths.runnerDir, 'pytest.ini'),
    `--rootdir=${paths.workspace}`,
    `--confcutdir=${paths.workspace}`,
    // The cache would be written into the workspace and change the next run's order.
    '-p',
    'no:cacheprovider',
    '-o',
    'junit_family=xunit2',
    `--junitxml=${path.posix.join(paths.output, reportName)}`,
    ...excludedTests.map((file) => `--ignore=${path.posix.join(paths.workspace, file)}`),
    ...testPaths,
  ];
  return {
    argv,
    env: {
      ...baseEnv(paths, dependencies),
      // Unbuffered, so the tail we keep is current when a run is killed.
      PYTHONUNBUFFERED: '1',
      // No __pycache__ left in the workspace; both modes pay the same compile cost.
      PYTHONDONTWRITEBYTECODE: '1',
      // Where the launcher finds aca's plugin (module `aca_results`). Read-only in the sandbox.
      PYTHONPATH: paths.runnerDir,
      // The acceptance test files, which the plugin compiles as it loads: their test functions
      // must be seen to run (verdicts/python/aca_results.py). Workspace-relative as in node ids,
      // and full.
      ACA_ACCEPTANCE_TESTS: JSON.stringify(
        acceptanceTests.map((file) => [file, path.posix.join(paths.workspace, file)]),
      ),
      ...(autoloadPlugins ? {} : { PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' }),
    },
  };
}

/**
 * The report's name for a test: pytest's JUnit writer turns the node id's file path into a
 * dotted class name (`tests/test_a.py::TestX::test_y[1]` -> `tests.test_a.TestX` and `test_y[1]`).
 */
export function junitName(nodeId: string): string {
  const bracket = nodeId.indexOf('[');
  const address = bracket < 0 ? nodeId : nodeId.slice(0, bracket);
  const params = bracket < 0 ? '' : nodeId.slice(bracket);
  const names = address.split('::');
  names[0] = names[0].replace(/\//g, '.').replace(/\.py$/, '');
  names[names.length - 1] += params;
  const name = names.pop()!;
  return names.length > 0 ? `${names.join('.')}::${name}` : name;
}

export function readPytestStream(text: string): StreamResult {
  const read = parseRecords(text, PytestRecord);
  if (!read.ok) return { cases: [], collectionErrors: [], finished: false, problems: [read.problem] };
  const phases = new Map<string, { when: string; outcome: string }[]>();
  const collectionErrors: string[] = [];
  const problems: string[] = [];
  let announcedExit: number | undefined;
  for (const record of read.records) {
    if (record.t === 'collect_error') collectionErrors.push(record.id || '(the test session)');
    else if (record.t === 'done') announcedExit = record.exit;
    else {
      const seen = phases.get(record.id) ?? [];
      if (seen.some((p) => p.when === record.when))
        problems.push(`${record.id} reported its ${record.when} phase twice`);
      // A phase that raised can legitimately end as skipped (an expected failure), never as passed.
      if (record.outcome === 'passed' && record.raw !== 'passed')
        problems.push(
          record.raw === 'unknown'
            ? `${record.id} was reported passed by something other than pytest's runner`
            : `${record.id}: its ${record.when} phase ${record.raw === 'failed' ? 'raised an error' : 'was skipped'}, yet it was reported passed`,
        );
      if (
        record.when === 'call' &&
        record.outcome === 'passed' &&
        record.body !== 'ran' &&
        record.body !== 'unknown'
      )
        problems.push(
          record.body === 'raised'
            ? `${record.id}: the test function raised an error, yet it was reported passed (the run was tampered with)`
            : `${record.id}: the test function itself never ran, yet it was reported passed (the run was tampered with)`,
        );
      seen.push({ when: record.when, outcome: record.outcome });
      phases.set(record.id, seen);
    }
  }
  const cases: TestCaseResult[] = [...phases].map(([name, seen]) => ({ name, status: combinePhases(seen) }));
  // pytest runs the call phase whenever setup passed, so in a run that got to its end a test that
  // passed without one was never run. (A run killed mid-test stops between the two; it fails anyway.)
  if (announcedExit !== undefined)
    for (const c of cases)
      if (c.status === 'passed' && !phases.get(c.name)!.some((p) => p.when === 'call'))
        problems.push(
          `${c.name} was reported passed, but its call phase never ran (the run was tampered with)`,
        );
  return {
    cases,
    collectionErrors,
    finished: announcedExit !== undefined,
    ...(announcedExit !== undefined ? { announcedExit } : {}),
    problems,
  };
}

export function parseJunit(xml: string, exitCode: number | null): ParsedReport {
  const cases: TestCaseResult[] = [];
  const collectionErrors: string[] = [];
  for (const testcase of readJunitCases(xml)) {
    const { name, classname } = testcase;
    // pytest marks import/syntax errors with this fixed message attribute.
    const collection = testcase.outcomes.find(
      (o) => o.kind === 'error' && o.attrs.message === 'collection failure',
    );
    // A file that failed to load is not a test: it is the run's collection error.
    if (collection) collectionErrors.push(`${name}: ${lastLines(collection.text, 6)}`);
    else cases.push(junitCaseResult(classname ? `${classname}::${name}` : name, testcase));
  }
  const brokenRun =
    exitCode === PYTEST_INTERRUPTED || exitCode === PYTEST_INTERNAL_ERROR || exitCode === PYTEST_USAGE_ERROR;
  // No file failed to load, yet pytest stopped: it could not run at all (its own crash, a bad
  // option or ini, an interrupt), which says nothing about the code under test.
  const unrunnable =
    collectionErrors.length === 0 && brokenRun
      ? `pytest exited with code ${exitCode} (interrupted, internal or usage error)`
      : null;
  if (unrunnable) collectionErrors.push(unrunnable);
  return {
    cases,
    ...(collectionErrors.length > 0
      ? { collectionError: `collection error: ${collectionErrors.join('; ')}` }
      : {}),
    ...(unrunnable ? { environment: unrunnable } : {}),
  };
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join('\n');
}
