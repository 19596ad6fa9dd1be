import * as path from 'node:path';
import { parseJunitReport } from '../verdicts/junit-cases';
import { NODE_ADDRESS_SPACE_HEADROOM, nodeRunEnv } from './node-runtime';
import { NODE_TOOL_ENTRIES } from './project-tools';
import { baseEnv, dependencyPath, type ReportOnlyRunner } from './runner';

/**
 * The project's vitest, once (`run`: no watching), with its own configuration, asked for a JUnit
 * report beside its usual output. Its JUnit cases are `<file>::<describe > … > test>`.
 */
export const vitestRunner: ReportOnlyRunner = {
  kind: 'vitest',
  resultsChannel: false,
  needsNode: true,
  addressSpaceHeadroomBytes: NODE_ADDRESS_SPACE_HEADROOM,
  reportExtension: 'xml',
  casesNamedByFile: true,
  // vite bundles an ES module config (vitest.config.ts in a "type": "module" package) into a
  // temporary file in node_modules/.vite-temp and imports it from there. Its other loaders write
  // nothing but run the config in a second V8 isolate, which needs more address space than the
  // run's RLIMIT_AS allows.
  scratchDirs: ['node_modules/.vite-temp'],
  command(ctx) {
    const { paths, limits, testPaths, reportName, dependencies } = ctx;
    const argv = [
      paths.node,
      path.posix.join(dependencyPath(ctx, 'node_modules'), NODE_TOOL_ENTRIES.vitest),
      'run',
      '--reporter=default',
      '--reporter=junit',
      `--outputFile.junit=${path.posix.join(paths.output, reportName)}`,
      // Its results cache would be written into node_modules/.vite (read-only in the sandbox).
      '--no-cache',
      // One test file at a time, as with Jest: a worker per core would spend the run's memory.
      '--no-file-parallelism',
      // Without it an empty suite exits 1 and reads as a broken run instead of no tests.
      '--passWithNoTests',
      ...testPaths,
    ];
    return { argv, env: { ...baseEnv(paths, dependencies), ...nodeRunEnv(limits), NODE_ENV: 'test' } };
  },
  parse(reportText, { workspace }) {
    return parseJunitReport(reportText, workspace);
  },
};
