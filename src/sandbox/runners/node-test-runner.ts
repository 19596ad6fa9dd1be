import * as path from 'node:path';
import { parseJunitReport, workspaceRelative } from '../verdicts/junit-cases';
import type { JunitCase } from '../verdicts/junit-xml';
import { NODE_ADDRESS_SPACE_HEADROOM, nodeRunEnv } from './node-runtime';
import { baseEnv, type ReportOnlyRunner } from './runner';

/** `--test-concurrency` came with Node 20.10 (the sandbox runs the worker's own node). */
const HAS_CONCURRENCY_FLAG = (() => {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > 20 || (major === 20 && minor >= 10);
})();

/**
 * Node's own test runner (`node --test`): its spec reporter to the output, its JUnit reporter to
 * the report file. Node's JUnit report does not name test files, so cases are named by their
 * suites: `<classname>::<describe > … > test>`, and a file that fails to load by its path.
 */
export const nodeTestRunner: ReportOnlyRunner = {
  kind: 'node-test',
  resultsChannel: false,
  needsNode: true,
  addressSpaceHeadroomBytes: NODE_ADDRESS_SPACE_HEADROOM,
  reportExtension: 'xml',
  casesNamedByFile: false,
  command({ paths, limits, testPaths, reportName, dependencies }) {
    const argv = [
      paths.node,
      '--test',
      // One test file (one child process) at a time: a child per core would spend the run's memory.
      ...(HAS_CONCURRENCY_FLAG ? ['--test-concurrency=1'] : []),
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=junit',
      `--test-reporter-destination=${path.posix.join(paths.output, reportName)}`,
      ...testPaths,
    ];
    return { argv, env: { ...baseEnv(paths, dependencies), ...nodeRunEnv(limits), NODE_ENV: 'test' } };
  },
  parse(reportText, { workspace }) {
    return parseJunitReport(reportText, workspace, nodeTestCaseId);
  },
};

export function nodeTestCaseId(testcase: JunitCase, workspace: string): string {
  const title = [...testcase.suites, workspaceRelative(testcase.name, workspace)].join(' > ');
  return testcase.classname ? `${testcase.classname}::${title}` : title;
}
