import type { DependencyFolder, TestCommandSpec, TestRunnerKind } from '../../shared/test-command';
import type { Language } from '../../shared/types';
import { makeCommandRunner } from './command-runner';
import { jestRunner } from './jest-runner';
import { mochaRunner } from './mocha-runner';
import { nodeTestRunner } from './node-test-runner';
import { projectJestRunner } from './project-jest-runner';
import { hasNodeTool, NODE_TOOL_ENTRIES, projectVenv, type NodeTool } from './project-tools';
import { makePytestRunner, pytestRunner } from './pytest-runner';
import type { TestRunner } from './runner';
import { vitestRunner } from './vitest-runner';

export type RunnerChoice = { ok: true; runner: TestRunner } | { ok: false; message: string };

const KINDS: readonly TestRunnerKind[] = ['pytest', 'jest', 'vitest', 'mocha', 'node-test', 'command'];

/**
 * The runner for a test command. Without one, aca's own runners, as before repositories had
 * commands of their own: pytest on Debian's interpreter for Python, aca's Jest otherwise. A runner
 * of the project's that is not installed in its node_modules is a clear failure, not a throw: the
 * run goes on and people are told what to install.
 */
export function selectRunner(
  language: Language,
  command: TestCommandSpec | undefined,
  dependencies: DependencyFolder[],
): RunnerChoice {
  if (command === undefined) return chosen(language === 'python' ? pytestRunner : jestRunner);
  if (!KINDS.includes(command.kind)) {
    throw new Error(
      `runTestSuite: unknown test runner kind ${JSON.stringify(command.kind)} (expected one of ${KINDS.join(', ')})`,
    );
  }
  switch (command.kind) {
    case 'pytest': {
      const venv = projectVenv(dependencies);
      return chosen(venv ? makePytestRunner(venv.relative) : pytestRunner);
    }
    case 'jest':
      return chosen(hasNodeTool(dependencies, 'jest') ? projectJestRunner : jestRunner);
    case 'vitest':
      return installed(dependencies, 'vitest', vitestRunner);
    case 'mocha':
      return installed(dependencies, 'mocha', mochaRunner);
    case 'node-test':
      return chosen(nodeTestRunner);
    case 'command': {
      const line = command.command;
      if (typeof line !== 'string' || line.trim() === '' || line.includes('\0')) {
        throw new Error('runTestSuite: a test command of kind "command" needs a non-empty command line');
      }
      return chosen(makeCommandRunner(line));
    }
  }
}

function chosen(runner: TestRunner): RunnerChoice {
  return { ok: true, runner };
}

function installed(dependencies: DependencyFolder[], tool: NodeTool, runner: TestRunner): RunnerChoice {
  if (hasNodeTool(dependencies, tool)) return chosen(runner);
  return {
    ok: false,
    message: `the project's tests run with ${tool}, but ${tool} is not installed in the repository's node_modules (node_modules/${NODE_TOOL_ENTRIES[tool]} is missing): install the project's dependencies there (npm install), or give a test command`,
  };
}
