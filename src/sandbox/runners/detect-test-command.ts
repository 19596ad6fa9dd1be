/**
 * How a repository runs its tests, when neither `--test-cmd` nor `.aca.json` says: Python projects
 * run pytest (with their virtual environment's interpreter when they have one), JavaScript and
 * TypeScript projects the runner their package.json `test` script names. Only the runner is taken
 * from the script, not its arguments: projects keep those in the runner's own configuration file
 * (jest.config.*, vitest.config.*, .mocharc.*), which the runners read themselves.
 */
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';
import type { DependencyFolder, TestCommandSpec, TestRunnerKind } from '../../shared/test-command';
import type { Language } from '../../shared/types';
import { hasNodeTool, projectVenv, type NodeTool } from './project-tools';
import { PYTHON } from './pytest-runner';
import { readBoundedReport } from '../verdicts/report-file';

export { findDependencyFolders } from '../workspace/dependency-folders';

/** Runners recognised in a `test` script, in the order they are looked for. */
const SCRIPT_RUNNERS: { kind: TestRunnerKind; pattern: RegExp }[] = [
  { kind: 'vitest', pattern: /\bvitest\b/ },
  { kind: 'jest', pattern: /\bjest\b/ },
  { kind: 'mocha', pattern: /\bmocha\b/ },
  // `node --test`, with any of node's own options before it.
  { kind: 'node-test', pattern: /\bnode\s+(?:-\S*\s+)*--test(?=\s|$)/ },
];

export function detectTestCommand(
  workTree: string,
  language: Language,
  dependencies: DependencyFolder[],
): TestCommandSpec {
  if (language === 'python') {
    const venv = projectVenv(dependencies);
    return detected('pytest', `pytest (${venv ? `${venv.relative}/bin/python` : PYTHON})`);
  }
  const script = packageTestScript(workTree);
  const kind = SCRIPT_RUNNERS.find(({ pattern }) => script !== null && pattern.test(script))?.kind ?? 'jest';
  return detected(kind, nodeRunnerLabel(kind, dependencies));
}

/**
 * The `test` script of the work tree's package.json, or null when there is no package.json or
 * it has no such script. Read without following a link and bounded in size like a report; a
 * package.json that is not a JSON object is the user's error (UserInputError), not "no tests".
 */
export function packageTestScript(workTree: string): string | null {
  const file = path.join(workTree, 'package.json');
  const read = readBoundedReport(file, 'json', 'package.json');
  if (read.kind === 'absent') return null;
  if (read.kind === 'refused') throw new UserInputError(`cannot read ${file}: ${read.reason}`);
  let manifest: unknown;
  try {
    manifest = JSON.parse(read.text);
  } catch (err) {
    throw new UserInputError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    throw new UserInputError(`${file} is not a JSON object`);
  }
  const scripts = (manifest as { scripts?: unknown }).scripts;
  if (typeof scripts !== 'object' || scripts === null) return null;
  const test = (scripts as { test?: unknown }).test;
  return typeof test === 'string' ? test : null;
}

function nodeRunnerLabel(kind: TestRunnerKind, dependencies: DependencyFolder[]): string {
  if (kind === 'node-test') return 'node --test';
  if (kind === 'jest' && !hasNodeTool(dependencies, 'jest')) return "jest (aca's)";
  const tool = kind as NodeTool;
  return hasNodeTool(dependencies, tool)
    ? `${tool} (node_modules/${tool})`
    : `${tool} (not installed in node_modules)`;
}

function detected(kind: TestRunnerKind, label: string): TestCommandSpec {
  return { kind, command: null, source: 'detected', label };
}
