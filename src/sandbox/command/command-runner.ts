import { NODE_ADDRESS_SPACE_HEADROOM, nodeRunEnv } from '../runners/node-runtime';
import { baseEnv, type ReportOnlyRunner } from '../runners/runner';

/**
 * An agent's command line as the launch path takes a process: bash runs it in the workspace with
 * the test runs' environment (the dependency folders' commands and node on PATH, HOME and TMPDIR
 * in the private /tmp). It writes no report; the caller reads its exit status and output.
 */
export function agentCommandRunner(commandLine: string): ReportOnlyRunner {
  return {
    kind: 'command',
    resultsChannel: false,
    needsNode: true,
    addressSpaceHeadroomBytes: NODE_ADDRESS_SPACE_HEADROOM,
    reportExtension: 'none',
    casesNamedByFile: false,
    command({ paths, limits, dependencies }) {
      return {
        argv: ['/bin/bash', '-c', commandLine],
        env: { ...baseEnv(paths, dependencies), ...nodeRunEnv(limits) },
      };
    },
    parse() {
      throw new Error("an agent's command writes no report to parse");
    },
  };
}
