import { latestStartedRun } from '../api/started-runs';
import type { AcaConfig } from '../config';
import { printableLine } from '../shared/terminal-text';
import type { CliIO } from './cli-context';

/**
 * The id a command was given, or, without one, the latest run started from this repository or
 * folder (else with this ACA_HOME), named on stderr so that the output says which run it is.
 */
export async function givenOrLatestRun(
  id: string | undefined,
  config: AcaConfig,
  io: CliIO,
): Promise<string> {
  if (id !== undefined) return id;
  const latest = await latestStartedRun(config.home);
  io.err(
    printableLine(
      latest.from === 'here'
        ? `aca: the latest run started here: ${latest.workflowId}`
        : `aca: no run was started here; the latest run started with ACA_HOME ${config.home}: ${latest.workflowId}`,
    ),
  );
  return latest.workflowId;
}
