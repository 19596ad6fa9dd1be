import type { Command } from 'commander';
import type { AcaClient } from '../api/aca-client';
import { cleanRuns, planClean, type CleanableRun } from '../api/clean-runs';
import { printableLine, printableName } from '../shared/terminal-text';
import { EXIT, type CliIO } from './cli-context';

export const CLEAN_HELP = `
Without --yes nothing is removed: the runs whose leftovers would go are listed, with those kept
and why. Removed: each run's worktree and branch aca/<id> (a run without --repo: its workspace
and git directory) and its branch in the git store, as aca discard does. Cleared: ended runs whose
changes were applied, that were discarded, or that changed nothing. Never a run still going; a
run whose changes were never applied only with --never-applied.`;

/** `aca clean [--yes] [--never-applied]`. */
export function addCleanCommand(
  program: Command,
  run: (work: (aca: AcaClient) => Promise<number>) => Promise<void>,
  io: CliIO,
): void {
  program
    .command('clean')
    .description('clear the worktrees and branches of ended runs that are done with (applied, discarded)')
    .option('--yes', 'remove them (without it, only list them)')
    .option('--never-applied', 'also runs whose changes were never applied')
    .addHelpText('after', CLEAN_HELP)
    .action(async (flags: { yes?: boolean; neverApplied?: boolean }) => {
      await run((aca) => cleanCommand(aca, flags, io));
    });
}

export async function cleanCommand(
  aca: AcaClient,
  flags: { yes?: boolean; neverApplied?: boolean },
  io: CliIO,
): Promise<number> {
  const plan = await planClean(aca, { neverApplied: flags.neverApplied === true });
  for (const kept of plan.keep) io.out(printableLine(`keep    ${kept.workflowId}: ${kept.why}`));
  if (plan.remove.length === 0) {
    io.out('Nothing to clean.');
    return EXIT.success;
  }
  if (flags.yes !== true) {
    for (const run of plan.remove) io.out(printableLine(`would remove ${describe(run)}`));
    io.out(`aca clean --yes removes ${plan.remove.length === 1 ? 'it' : `these ${plan.remove.length}`}.`);
    return EXIT.success;
  }
  let failed = 0;
  for (const done of await cleanRuns(aca, plan.remove)) {
    const run = plan.remove.find((r) => r.workflowId === done.workflowId)!;
    if (done.error === null) io.out(printableLine(`removed ${describe(run)}`));
    else {
      failed += 1;
      io.err(printableLine(`aca: could not clean ${run.workflowId}: ${done.error}`));
    }
  }
  return failed === 0 ? EXIT.success : EXIT.failed;
}

function describe(run: CleanableRun): string {
  const what = [
    run.workTree && `worktree ${printableName(run.workTree)}`,
    run.branch && `branch ${printableName(run.branch)}`,
  ].filter(Boolean);
  return `${run.workflowId} (${run.reason}): ${what.join(', ')}`;
}
