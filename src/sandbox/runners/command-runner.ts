import * as path from 'node:path';
import { parseJunitReport } from '../verdicts/junit-cases';
import { NODE_ADDRESS_SPACE_HEADROOM, nodeRunEnv } from './node-runtime';
import { clipCaseTail } from '../verdicts/report';
import { missingRunModule } from './missing-module';
import { baseEnv, type ReportOnlyRunner } from './runner';

/** How many lines of a failed command's output become its case's message. */
const TAIL_LINES = 40;

/**
 * The user's own test command line, run by /bin/sh in the workspace. A command that writes a
 * JUnit report to `$ACA_JUNIT_XML` (a file in the run's output folder) gets its cases read from
 * it; otherwise its exit status is a single test, `command::<command line>`. Test paths do not
 * apply: the command decides what runs. Node and the dependency folders' commands are on PATH,
 * so `npm test` or `npx vitest run` work as in the repository.
 */
export function makeCommandRunner(commandLine: string): ReportOnlyRunner {
  const caseId = commandCaseId(commandLine);
  return {
    kind: 'command',
    resultsChannel: false,
    needsNode: true,
    addressSpaceHeadroomBytes: NODE_ADDRESS_SPACE_HEADROOM,
    reportExtension: 'xml',
    casesNamedByFile: false,
    command({ paths, limits, reportName, dependencies }) {
      return {
        argv: ['/bin/sh', '-c', commandLine],
        env: {
          ...baseEnv(paths, dependencies),
          // For whatever node the command starts (see node-runtime.ts).
          ...nodeRunEnv(limits),
          ACA_JUNIT_XML: path.posix.join(paths.output, reportName),
        },
      };
    },
    parse(reportText, { workspace }) {
      return parseJunitReport(reportText, workspace);
    },
    withoutReport({ exitCode, exitSignal, output }) {
      if (exitCode === 0) return { cases: [{ name: caseId, status: 'passed' }] };
      // The shell's own codes for a command it could not find or run: no test ran, none failed.
      if (exitCode === 126 || exitCode === 127) {
        const why = `the test command could not start (${exitCode === 127 ? 'command not found' : 'not executable'}, exit ${exitCode})`;
        const tail = output.trimEnd().split('\n').slice(-TAIL_LINES).join('\n');
        return { cases: [], collectionError: `${why}:\n${tail}`, environment: why };
      }
      const module = exitCode === null ? null : missingRunModule(commandLine, output);
      if (module) {
        const why = `the test command could not start (Python has no module named ${module}, exit ${exitCode})`;
        const tail = output.trimEnd().split('\n').slice(-TAIL_LINES).join('\n');
        return { cases: [], collectionError: `${why}:\n${tail}`, environment: why };
      }
      const how = exitSignal ? `was killed by ${exitSignal}` : `exited with code ${String(exitCode)}`;
      const tail = output.trimEnd().split('\n').slice(-TAIL_LINES).join('\n');
      return {
        cases: [{ name: caseId, status: 'failed', message: clipCaseTail(`the command ${how}:\n${tail}`) }],
      };
    },
  };
}

/** The stable name of a command's only test when it writes no report. */
export function commandCaseId(commandLine: string): string {
  return `command::${commandLine}`;
}
