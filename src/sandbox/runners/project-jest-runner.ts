import * as path from 'node:path';
import { jestReading } from './jest-runner';
import { nodeRunEnv } from './node-runtime';
import { NODE_TOOL_ENTRIES } from './project-tools';
import { baseEnv, dependencyPath, type StreamingRunner } from './runner';

/**
 * The project's own Jest (from its node_modules) with the project's own configuration, which Jest
 * finds itself (jest.config.*, package.json "jest"). Only what aca needs to judge the run is
 * added: the JSON report, aca's results reporter beside Jest's default one (so the stream is
 * cross-checked as with aca's Jest), one process, and a cache outside the workspace.
 */
export const projectJestRunner: StreamingRunner = {
  ...jestReading,
  kind: 'jest',
  command(ctx) {
    const { paths, limits, testPaths, reportName, dependencies } = ctx;
    const argv = [
      paths.node,
      path.posix.join(dependencyPath(ctx, 'node_modules'), NODE_TOOL_ENTRIES.jest),
      '--ci',
      '--runInBand',
      '--json',
      `--outputFile=${path.posix.join(paths.output, reportName)}`,
      '--passWithNoTests',
      '--reporters=default',
      `--reporters=${path.posix.join(paths.runnerDir, 'aca-results-reporter.js')}`,
      `--cacheDirectory=${path.posix.join(paths.tmp, 'jest-cache')}`,
      // Jest would look for a watchman binary; there is none in the sandbox.
      '--no-watchman',
      ...(testPaths.length > 0 ? ['--runTestsByPath', ...testPaths] : []),
    ];
    return { argv, env: { ...baseEnv(paths, dependencies), ...nodeRunEnv(limits), NODE_ENV: 'test' } };
  },
};
