import * as path from 'node:path';
import { classnameId, parseJunitReport, workspaceRelative } from '../verdicts/junit-cases';
import type { JunitCase } from '../verdicts/junit-xml';
import { NODE_ADDRESS_SPACE_HEADROOM, nodeRunEnv } from './node-runtime';
import { NODE_TOOL_ENTRIES } from './project-tools';
import { baseEnv, dependencyPath, type ReportOnlyRunner } from './runner';

/**
 * The project's mocha with its own configuration (.mocharc.*, package.json "mocha"), reporting
 * through its xunit reporter into a file. Mocha runs one reporter at a time, so its console output
 * is only what the tests print; the failures' messages are in the report's cases.
 */
export const mochaRunner: ReportOnlyRunner = {
  kind: 'mocha',
  resultsChannel: false,
  needsNode: true,
  addressSpaceHeadroomBytes: NODE_ADDRESS_SPACE_HEADROOM,
  reportExtension: 'xml',
  casesNamedByFile: true,
  command(ctx) {
    const { paths, limits, testPaths, reportName, dependencies } = ctx;
    const argv = [
      paths.node,
      path.posix.join(dependencyPath(ctx, 'node_modules'), NODE_TOOL_ENTRIES.mocha),
      '--reporter',
      'xunit',
      '--reporter-option',
      `output=${path.posix.join(paths.output, reportName)}`,
      ...testPaths,
    ];
    return { argv, env: { ...baseEnv(paths, dependencies), ...nodeRunEnv(limits), NODE_ENV: 'test' } };
  },
  parse(reportText, { workspace }) {
    return parseJunitReport(reportText, workspace, mochaCaseId);
  },
};

/**
 * `<file>::<full title>`: mocha's xunit reporter names each case's file, and its classname is the
 * title of the suites around it (empty at the top level); title and classname together are what
 * mocha calls the test's full title.
 */
export function mochaCaseId(testcase: JunitCase, workspace: string): string {
  if (testcase.file === undefined) return classnameId(testcase, workspace);
  const title = [testcase.classname, testcase.name].filter((part) => part).join(' ');
  return `${workspaceRelative(testcase.file, workspace)}::${title}`;
}
