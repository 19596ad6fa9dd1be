import { Command } from 'commander';
import type { ApplyAllowances } from '../repo';
import { addCleanCommand } from './clean-command';
import { LATEST_RUN, withClient, withRunOf, type ProgramContext } from './program-context';
import {
  APPLY_HELP,
  applyCommand,
  DIFF_HELP,
  diffCommand,
  DISCARD_HELP,
  discardCommand,
} from './review-commands';

/** The commands on a run's changes once it has ended: diff, apply, discard, clean. */
export function addReviewCommands(program: Command, ctx: ProgramContext): void {
  const { io, config, set } = ctx;
  program
    .command('diff')
    .description("the run's changes against the commit it started from, as a unified diff")
    .argument('[id]', LATEST_RUN)
    .option('--stat', 'one line per changed file with its counts instead')
    .option('--raw', 'print the bytes as git wrote them, control characters and all (for pipes)')
    .addHelpText('after', DIFF_HELP)
    .action(async (id: string | undefined, flags: { stat?: boolean; raw?: boolean }) => {
      set(await withRunOf(ctx, id, (aca, run) => diffCommand(aca, run, flags, io)));
    });

  program
    .command('apply')
    .description("bring an ended --repo run's changes onto your current branch as one commit")
    .argument('<id>', 'run id')
    .option('--allow-binary', 'apply new binary files too (refused otherwise: the diff cannot show them)')
    .option(
      '--allow-links',
      'apply links that point outside the repository or into a git directory too (refused otherwise)',
    )
    .option('--allow-attributes', 'apply .gitattributes the run adds or changes too (refused otherwise)')
    .addHelpText('after', APPLY_HELP)
    .action(async (id: string, flags: ApplyAllowances) => {
      set(await withClient(config(), (aca) => applyCommand(aca, id, io, flags)));
    });

  program
    .command('discard')
    .description("remove an ended run's worktree and branch")
    .argument('<id>', 'run id')
    .option('--force', 'also when the changes were never applied, without asking')
    .addHelpText('after', DISCARD_HELP)
    .action(async (id: string, flags: { force?: boolean }) => {
      set(await withClient(config(), (aca) => discardCommand(aca, id, flags, io)));
    });

  addCleanCommand(program, async (work) => set(await withClient(config(), work)), io);
}
