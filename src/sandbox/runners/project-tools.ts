/**
 * What the repository's dependency folders provide, looked at on the worker's host: a virtual
 * environment's interpreter, and the test runners installed in node_modules. Both the runner
 * choice (select-runner.ts) and the label of a detected command (detect-test-command.ts) use it,
 * so what people are told runs is what runs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DependencyFolder } from '../../shared/test-command';
import { isVirtualEnv } from '../launch/dependency-env';
import { readBoundedReport } from '../verdicts/report-file';

/** The node_modules-relative entry script of each runner the project may have installed. */
export const NODE_TOOL_ENTRIES = {
  jest: 'jest/bin/jest.js',
  vitest: 'vitest/vitest.mjs',
  mocha: 'mocha/bin/mocha.js',
} as const;
export type NodeTool = keyof typeof NODE_TOOL_ENTRIES;

/**
 * aca's results reporter needs Jest's per-test event (onTestCaseResult), which only Jest 27's
 * default runner (jest-circus) sends: an older Jest would look as if its report had been forged.
 */
const MIN_PROJECT_JEST_MAJOR = 27;

/** The first virtual environment (`.venv`, then `venv`, as given) with a `bin/python`. */
export function projectVenv(dependencies: DependencyFolder[]): DependencyFolder | undefined {
  return dependencies.find(
    (dep) => isVirtualEnv(dep.relative) && fs.existsSync(path.join(dep.hostPath, 'bin', 'python')),
  );
}

/** The repository root's node_modules. */
export function projectNodeModules(dependencies: DependencyFolder[]): DependencyFolder | undefined {
  return dependencies.find((dep) => dep.relative === 'node_modules');
}

/** Whether the root node_modules holds `tool`'s entry script (and, for Jest, a recent enough Jest). */
export function hasNodeTool(dependencies: DependencyFolder[], tool: NodeTool): boolean {
  const nodeModules = projectNodeModules(dependencies);
  if (!nodeModules || !fs.existsSync(path.join(nodeModules.hostPath, NODE_TOOL_ENTRIES[tool]))) return false;
  return tool !== 'jest' || (jestMajor(nodeModules.hostPath) ?? 0) >= MIN_PROJECT_JEST_MAJOR;
}

function jestMajor(nodeModules: string): number | null {
  const read = readBoundedReport(path.join(nodeModules, 'jest', 'package.json'), 'json');
  if (read.kind !== 'read') return null;
  try {
    const { version } = JSON.parse(read.text) as { version?: unknown };
    const major = typeof version === 'string' ? Number.parseInt(version, 10) : NaN;
    return Number.isFinite(major) ? major : null;
  } catch {
    return null;
  }
}
