import * as path from 'node:path';
import { jestConfig, jestReading } from '../runners/jest-runner';
import { nodeHeapFlag, nodeRunEnv } from '../runners/node-runtime';
import type { ParsedReport } from './report';
import { baseEnv, type StreamingRunner } from '../runners/runner';

/**
 * The process that gives the acceptance verdict for Jest: aca's Jest on the user's acceptance test
 * files alone, with aca's configuration on the command line (no config, setup file, transformer or
 * reporter from the workspace is loaded), the tests in a worker process of their own and aca's
 * reporter with the results channel in Jest's main process, aca's test environment watching Jest's
 * record of each test from outside the tests' context, and aca's guard fixing the framework's globals
 * and the intrinsics the assertions use before the code under test loads (js/verdict-*.cjs).
 */
export const jestVerdictRunner: StreamingRunner = {
  ...jestReading,
  kind: 'jest',
  command(ctx) {
    const { paths, limits, testPaths, reportName, dependencies } = ctx;
    const config = {
      ...jestConfig(paths),
      runner: path.posix.join(paths.runnerDir, 'aca-verdict-runner.js'),
      testEnvironment: path.posix.join(paths.runnerDir, 'aca-verdict-environment.js'),
      testRunner: path.posix.join(paths.runnerDir, 'aca-verdict-test-framework.js'),
      setupFilesAfterEnv: [path.posix.join(paths.runnerDir, 'aca-verdict-guard.js')],
      injectGlobals: true,
      // One worker process, not a thread: a thread would share the main process's file descriptors.
      workerThreads: false,
      maxWorkers: 1,
    };
    const argv = [
      paths.node,
      nodeHeapFlag(limits),
      path.posix.join(paths.runnerDir, 'node_modules', 'jest', 'bin', 'jest.js'),
      '--config',
      JSON.stringify(config),
      '--ci',
      '--json',
      `--outputFile=${path.posix.join(paths.output, reportName)}`,
      '--passWithNoTests',
      '--runTestsByPath',
      ...testPaths,
    ];
    return { argv, env: { ...baseEnv(paths, dependencies), ...nodeRunEnv(limits), NODE_ENV: 'test' } };
  },
  parse(reportText, run): ParsedReport {
    const parsed = jestReading.parse(reportText, run);
    const failing = parsed.cases.some((c) => c.status === 'failed' || c.status === 'error');
    // Jest exits 0 exactly when every file ran and no test failed; a report of no failure from a
    // process that did not (killed, or ended by the code under test) is not a pass.
    if (run.exitCode === 0 || failing || parsed.collectionError !== undefined) return parsed;
    return {
      ...parsed,
      collectionError: `the acceptance run ended with ${run.exitCode === null ? 'a signal' : `exit code ${run.exitCode}`}, yet its report shows no failing test`,
    };
  },
};
