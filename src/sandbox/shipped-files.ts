import * as fs from 'node:fs';
import * as path from 'node:path';
import { SystemError } from '../shared/errors';

/**
 * The Python and JavaScript aca runs in and beside the test process, kept as files of their own so
 * that they compile, lint and run on their own. tsc copies nothing but what it compiles, so the
 * build copies these into dist/ (scripts/copy-assets.mjs). The paths are relative to this module,
 * which is src/sandbox under ts-jest and tsx and dist/sandbox when built.
 *
 * How each reaches the test process is unchanged by where it is kept: the launchers' text is
 * passed with `python -c`, the plugin and the Jest files are written into the runner folder
 * (launch/runner-files.ts) and mounted read-only.
 */
export const SHIPPED_FILES = {
  /** aca's pytest plugin, module `aca_results`. */
  pytestResultsPlugin: 'verdicts/python/aca_results.py',
  /** How aca starts pytest: its text is the `-c` argument. */
  pytestLauncher: 'verdicts/python/pytest_launcher.py',
  /** The pytest verdict process: its text is the `-c` argument. */
  pytestVerdictLauncher: 'verdicts/python/pytest_verdict.py',
  /** The verdict's checks of values and comparisons: its text goes before the launcher's. */
  pytestVerdictValues: 'verdicts/python/pytest_verdict_values.py',
  /** The verdict's checks of the names a test reads: its text goes before the launcher's. */
  pytestVerdictNames: 'verdicts/python/pytest_verdict_names.py',
  /** How the verdict process imports (source only, the base commit's helpers): before the launcher's. */
  pytestVerdictImports: 'verdicts/python/pytest_verdict_imports.py',
  /** Which code the verdict takes for the acceptance tests' own: its text goes before the launcher's. */
  pytestVerdictCode: 'verdicts/python/pytest_verdict_code.py',
  /** The verdict's signed results channel: its text goes before the launcher's. */
  pytestVerdictChannel: 'verdicts/python/pytest_verdict_channel.py',
  /** The /proc paths the verdict guards: its text goes before the launcher's. */
  pytestVerdictProc: 'verdicts/python/pytest_verdict_proc.py',
  /** How the verdict watches a test's call phase: its text goes before the launcher's. */
  pytestVerdictWatch: 'verdicts/python/pytest_verdict_watch.py',
  /** The verdict's pytest plugin, which feeds its audit hook: its text goes before the launcher's. */
  pytestVerdictPlugin: 'verdicts/python/pytest_verdict_plugin.py',
  /** The test ids an acceptance file defines, read on the host: its text is the `-c` argument. */
  pythonAcceptanceTests: 'verdicts/python/acceptance_tests.py',
  jestResultsReporter: 'verdicts/js/results-reporter.cjs',
  jestVerdictRunner: 'verdicts/js/verdict-runner.cjs',
  jestVerdictEnvironment: 'verdicts/js/verdict-environment.cjs',
  jestVerdictGuard: 'verdicts/js/verdict-guard.cjs',
  jestVerdictTestFramework: 'verdicts/js/verdict-test-framework.cjs',
  jestVerdictAcceptanceModules: 'verdicts/js/verdict-acceptance-modules.cjs',
  jestTransformer: 'runners/js/jest-transformer.cjs',
} as const;

export type ShippedFile = keyof typeof SHIPPED_FILES;

/** A file of aca's own is missing from its installation (a build that did not copy it). */
export class MissingShippedFileError extends SystemError {
  constructor(
    readonly file: string,
    options: { cause: unknown },
  ) {
    super(`aca's ${file} is missing: the build copies it beside the compiled code (npm run build)`);
    this.cause = options.cause;
  }
}

export function shippedFilePath(name: ShippedFile): string {
  return path.join(__dirname, SHIPPED_FILES[name]);
}

const texts = new Map<ShippedFile, string>();

/** The file's text, read once per process. */
export function shippedFile(name: ShippedFile): string {
  let text = texts.get(name);
  if (text === undefined) {
    const file = shippedFilePath(name);
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new MissingShippedFileError(file, { cause: err });
    }
    texts.set(name, text);
  }
  return text;
}
