/**
 * How a run's tests are run, decided once when the run starts (run-types.ts carries it through the
 * workflow). Type-only: the workflow bundle includes this file.
 */

/**
 * - `pytest`: aca's pytest driver (its results plugin, its config), with the project's virtual
 *   environment's interpreter when the repository has one, else Debian's.
 * - `jest`: the project's own Jest (from its `node_modules`, with its own config) when it has
 *   one, else aca's Jest with aca's config; aca's results reporter either way.
 * - `vitest`, `mocha`, `node-test`: the project's runner, asked for a JUnit XML report.
 * - `command`: a shell command line; its JUnit XML report (written to `$ACA_JUNIT_XML`) gives the
 *   cases, else its exit status is one test.
 */
export type TestRunnerKind = 'pytest' | 'jest' | 'vitest' | 'mocha' | 'node-test' | 'command';

export interface TestCommandSpec {
  kind: TestRunnerKind;
  /** The command line for `command`; null for the others. */
  command: string | null;
  /** Where it came from: `--test-cmd`, `testCommand` in `.aca.json`, or detection. */
  source: 'option' | 'config' | 'detected';
  /** One line for people: what runs, e.g. `pytest (.venv/bin/python)` or `npm test`. */
  label: string;
}

/**
 * A dependency folder of the user's repository (`.venv`, `venv`, `node_modules`) that is not part
 * of the run's commits: mounted read-only in the sandbox at `relative`, its `bin` first on PATH.
 */
export interface DependencyFolder {
  /** Path relative to the repository root (and so to the worktree). */
  relative: string;
  /** Absolute path of the folder in the user's repository on the worker's host. */
  hostPath: string;
}

/** Limits a repository may set in `.aca.json`, in people's units; unset ones keep aca's defaults. */
export interface ProjectLimits {
  wallTimeSeconds?: number;
  memoryMiB?: number;
  cpuSeconds?: number;
}
