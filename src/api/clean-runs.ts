import * as fs from 'node:fs';
import * as path from 'node:path';
import { wasApplied, git } from '../repo';
import type { RunSnapshot } from '../shared/run-types';
import type { AcaClient } from './aca-client';
import { readStartedRuns } from './started-runs';

/** Why a run's worktree and branch may go, or why they stay. */
export type CleanReason = 'applied' | 'discarded' | 'no changes' | 'never applied';

export interface CleanableRun {
  workflowId: string;
  reason: CleanReason;
  /** What is left of the run on this machine: its work tree and its branch (null: gone already). */
  workTree: string | null;
  branch: string | null;
}

export interface CleanPlan {
  /** Runs whose leftovers go. */
  remove: CleanableRun[];
  /** Runs whose leftovers stay, each with why: still going, or changes never applied. */
  keep: Array<{ workflowId: string; why: string }>;
}

/** How many runs, newest first, are looked at. */
const RUNS_LOOKED_AT = 1000;

/**
 * Which runs' worktrees and branches (for a run without `--repo`: its workspace and git directory)
 * can be cleared: ended runs whose changes were applied, that were discarded and left something
 * behind, or that changed nothing. A run still going is never touched, and one whose changes were
 * never applied only with `neverApplied`. Only this home's runs are looked at (started with it, or
 * working under its ACA_WORKSPACES), and only what is on this machine: a namespace may be shared.
 */
export async function planClean(
  aca: AcaClient,
  options: { neverApplied?: boolean } = {},
): Promise<CleanPlan> {
  const plan: CleanPlan = { remove: [], keep: [] };
  const started = new Set(readStartedRuns(aca.config.home).map((r) => r.workflowId));
  const workspaces = path.resolve(aca.config.workspacesRoot);
  const ours = (id: string, workTree: string) =>
    started.has(id) || path.resolve(workTree).startsWith(`${workspaces}${path.sep}`);
  for (const row of await aca.list({ limit: RUNS_LOOKED_AT })) {
    if (row.status === 'RUNNING') {
      if (!started.has(row.workflowId)) continue;
      plan.keep.push({ workflowId: row.workflowId, why: `still going (${row.state})` });
      continue;
    }
    const run = aca.run(row.workflowId);
    const snapshot = await run.state().catch(() => null);
    if (!snapshot?.place || !ours(row.workflowId, snapshot.place.workTree)) continue;
    if (!fs.existsSync(path.join(snapshot.place.commonDir, 'HEAD'))) continue;
    const left = await leftovers(snapshot);
    if (!left.workTree && !left.branch) continue;
    const found = { workflowId: row.workflowId, ...left };
    if (run.discardedAt() !== null) plan.remove.push({ ...found, reason: 'discarded' });
    else if (snapshot.changedFiles.length === 0) plan.remove.push({ ...found, reason: 'no changes' });
    else if (
      snapshot.repo !== null &&
      (await wasApplied(snapshot.place.commonDir, row.workflowId, snapshot.branch))
    )
      plan.remove.push({ ...found, reason: 'applied' });
    else if (options.neverApplied) plan.remove.push({ ...found, reason: 'never applied' });
    else
      plan.keep.push({
        workflowId: row.workflowId,
        why: 'changes never applied (aca apply, or --never-applied)',
      });
  }
  return plan;
}

/** Removes what planClean chose; each run as `aca discard --force` would. */
export async function cleanRuns(
  aca: AcaClient,
  runs: readonly CleanableRun[],
): Promise<Array<{ workflowId: string; error: string | null }>> {
  const done: Array<{ workflowId: string; error: string | null }> = [];
  for (const run of runs) {
    try {
      await aca.run(run.workflowId).discard({ force: true });
      done.push({ workflowId: run.workflowId, error: null });
    } catch (err) {
      done.push({ workflowId: run.workflowId, error: (err as Error).message });
    }
  }
  return done;
}

async function leftovers(snapshot: RunSnapshot): Promise<{ workTree: string | null; branch: string | null }> {
  const { place } = snapshot;
  const workTree = place && fs.existsSync(place.workTree) ? place.workTree : null;
  let kept: string | null = null;
  if (place) {
    const branch = place.branch;
    const found = await git(
      { gitDir: place.commonDir },
      ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`],
      {
        allowExitCodes: [1],
      },
    ).catch(() => '');
    if (found.trim()) kept = branch;
  }
  return { workTree, branch: kept };
}
