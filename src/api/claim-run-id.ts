import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { RunStateError, UserInputError } from '../shared/errors';
import { clearDiscarded, type DiscardRunResult } from '../repo';
import type { RunResult } from '../shared/run-types';

/** What claiming an id needs of AcaClient: its Temporal client, its home, and a run's handle. */
export interface RunIdClaimer {
  temporal: Client;
  config: { home: string };
  run(workflowId: string): {
    result(): Promise<Pick<RunResult, 'state' | 'reason'>>;
    discard(options: { force: boolean }): Promise<DiscardRunResult>;
  };
}

/**
 * Makes sure starting a run under `workflowId` replaces nothing by accident. An id nobody used is
 * free. A run still going keeps its id whatever is asked. An ended run's id is taken only with
 * `replace`, and then that run is discarded first (its worktree, branch and store branch), so no
 * branch is silently moved under a result that still names it. Returns what was discarded, to
 * be said to the user, or null when the id was free.
 */
export async function claimRunId(
  aca: RunIdClaimer,
  workflowId: string,
  replace: boolean,
): Promise<string | null> {
  let description;
  try {
    description = await aca.temporal.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      // A run under this id may have been discarded here before Temporal forgot it.
      clearDiscarded(aca.config.home, workflowId);
      return null;
    }
    throw err;
  }
  if (description.status.name === 'RUNNING') {
    throw new RunStateError(workflowId, `run ${workflowId} is still going; choose another --id`);
  }
  const run = aca.run(workflowId);
  const ended = await run.result().then(
    (r) => `ended ${r.state}${r.reason ? ` (${r.reason})` : ''}`,
    () => `ended ${description.status.name.toLowerCase()}`,
  );
  if (!replace) {
    throw new UserInputError(
      `a run with id ${workflowId} exists (${ended}); choose another --id, or add --replace to discard that run (its worktree, its branch aca/${workflowId} and any changes not applied) and start anew`,
    );
  }
  const discarded = await run.discard({ force: true }).then(
    (d) =>
      [
        d.workTree && `its work tree ${d.workTree}`,
        d.branch && `its branch ${d.branch}`,
        d.gitDir && `its git directory ${d.gitDir}`,
        d.store && `its branch in the git store ${d.store}`,
      ]
        .filter(Boolean)
        .join(', ') || 'nothing was left to remove',
    (err: unknown) => `nothing (${(err as Error).message})`,
  );
  clearDiscarded(aca.config.home, workflowId);
  return `replacing run ${workflowId} (${ended}): discarded ${discarded}`;
}
