import { log } from '@temporalio/workflow';
import { DEFAULT_HOST_START_TIMEOUT_MS, hostActivities, type HostActivities } from './activity-options';
import type { RunContext } from './run-context';
import { isStartTimeout } from './start-timeout';

/**
 * Runs a step of the run's host. When the host takes no step within the start timeout (only
 * for a run that can move: without a git store a dead host's runs wait for it), another worker
 * adopts the run from the store at the recorded commit, and the step goes to its queues. A test
 * queue that is only busy is told from a dead host by a step on the host's other queue.
 */
export async function stepOnHost<T>(
  run: RunContext,
  step: (host: HostActivities) => Promise<T>,
  queue: 'files' | 'tests',
): Promise<T> {
  for (;;) {
    const queues = run.work.host;
    if (!queues) throw new Error('the run has no host yet');
    const host = hostActivities(queues, hostStartTimeoutMs(run), run.work.heartbeatTimeoutMs);
    try {
      return await step(host);
    } catch (err) {
      if (!isStartTimeout(err)) throw err;
      if (queue === 'tests' && (await hostAnswers(host))) continue;
      await moveRun(run);
    }
  }
}

function hostStartTimeoutMs(run: RunContext): number | undefined {
  if (!run.work.movable) return undefined;
  return run.input.options.hostStartTimeoutMs ?? run.work.hostStartTimeoutMs ?? DEFAULT_HOST_START_TIMEOUT_MS;
}

async function hostAnswers(host: HostActivities): Promise<boolean> {
  try {
    await host.ping.hostAlive.executeWithOptions({ summary: "host · is the run's host alive?" }, []);
    return true;
  } catch (err) {
    if (isStartTimeout(err)) return false;
    throw err;
  }
}

/** Another worker takes the run over from the git store, its setup command run again there. */
async function moveRun(run: RunContext): Promise<void> {
  const { record, work } = run;
  const from = work.host!.host;
  const adopted = await run.activities.repository.adoptRun.executeWithOptions(
    { summary: `host · adopt the run from the git store (${from} took no step)` },
    [run.hostStep()!],
  );
  log.warn('the run moved to another host', { from, to: adopted.queues.host });
  work.host = adopted.queues;
  record.place = adopted.place;
  record.workspace = adopted.place.workTree;
  run.publish();
  const command = work.setupCommand;
  // Before the run's own setup step has succeeded, that step (retried on the new host) runs it.
  if (!command || !work.testSetup || !work.setUp) return;
  const setup = await run.onHost(
    (host) =>
      host.testing.runSetup.executeWithOptions({ summary: `setup · ${command.slice(0, 80)} (adopted run)` }, [
        {
          language: run.input.language,
          command,
          setup: work.testSetup!,
          network: run.input.setupNetwork,
          ...run.hostStep()!,
          execution: run.execution,
        },
      ]),
    'tests',
  );
  if (!setup.ok) log.warn('the setup command failed on the adopting host', { outcome: setup.outcome });
}
