import { Command, Option } from 'commander';
import { UserInputError } from '../shared/errors';
import { LISTED_STATES, type ListedState } from '../shared/types';
import { evalBatchControl } from './eval-command';
import {
  cancelCommand,
  extendCommand,
  feedbackCommand,
  listCommand,
  logCommand,
  pauseResumeCommand,
  resultCommand,
  statusCommand,
  watchCommand,
} from './inspect-commands';
import { jsonOption, LATEST_RUN, withClient, withRunOf, type ProgramContext } from './program-context';

/** The commands that look at a run or steer it while it runs: status, watch, pause, feedback, list, ... */
export function addInspectCommands(program: Command, ctx: ProgramContext): void {
  const { io, config, set } = ctx;
  program
    .command('status')
    .description('state, iteration, pass rate, paused or not, last analysis')
    .argument('[id]', LATEST_RUN)
    .addOption(jsonOption())
    .action(async (id: string | undefined, flags: { json?: boolean }) => {
      set(await withRunOf(ctx, id, (aca, run) => statusCommand(aca, run, flags, io)));
    });

  program
    .command('watch')
    .description('live progress until the run ends')
    .argument('[id]', LATEST_RUN)
    .action(async (id: string | undefined) => {
      set(await withRunOf(ctx, id, (aca, run) => watchCommand(aca, run, io)));
    });

  for (const action of ['pause', 'resume'] as const) {
    program
      .command(action)
      .description(action === 'pause' ? 'pause a run: no new step starts' : 'resume a paused run')
      .argument('<id>', 'run id')
      .action(async (id: string) => {
        set(
          await withClient(
            config(),
            async (aca) =>
              (await evalBatchControl(aca, id, action, io)) ?? pauseResumeCommand(aca, id, io, action),
          ),
        );
      });
  }

  program
    .command('feedback')
    .description('guidance for the next Coder turn of a running run')
    .argument('<id>', 'run id')
    .argument('<text>', 'the guidance, as one quoted argument')
    .action(async (id: string, text: string) => {
      set(await withClient(config(), (aca) => feedbackCommand(aca, id, text, io)));
    });

  program
    .command('extend')
    .description('give a run waiting at its iteration limit (--on-limit ask) more attempts')
    .argument('<id>', 'run id')
    .option('--iterations <n>', 'how many more attempts')
    .option('--feedback <text>', 'guidance for its next Coder turn')
    .action(async (id: string, flags: { iterations?: string; feedback?: string }) => {
      set(await withClient(config(), (aca) => extendCommand(aca, id, flags, io)));
    });

  program
    .command('log')
    .description('the run as plain text: each agent step, its tool calls and outcomes, test counts, analyses')
    .argument('[id]', LATEST_RUN)
    .action(async (id: string | undefined) => {
      set(await withRunOf(ctx, id, (aca, run) => logCommand(aca, run, io)));
    });

  program
    .command('cancel')
    .description('cancel a run')
    .argument('<id>', 'run id')
    .action(async (id: string) => {
      set(
        await withClient(
          config(),
          async (aca) => (await evalBatchControl(aca, id, 'cancel', io)) ?? cancelCommand(aca, id, io),
        ),
      );
    });

  program
    .command('result')
    .description("the run's outcome; waits for the run to end")
    .argument('[id]', LATEST_RUN)
    .addOption(jsonOption())
    .option('--no-wait', 'show the current state of a run that has not ended instead of waiting')
    .action(async (id: string | undefined, flags: { json?: boolean; wait: boolean }) => {
      set(await withRunOf(ctx, id, (aca, run) => resultCommand(aca, run, flags, io)));
    });
}

/** `aca list`: runs, newest first. */
export function addListCommand(program: Command, ctx: ProgramContext): void {
  const { io, config, set } = ctx;
  program
    .command('list')
    .description('runs, newest first')
    .addOption(
      new Option('--state <state>', 'only runs in this state').argParser((value) => {
        const state = value.toUpperCase();
        if (!(LISTED_STATES as readonly string[]).includes(state)) {
          throw new UserInputError(`unknown state "${value}"; choose one of ${LISTED_STATES.join(', ')}`);
        }
        return state as ListedState;
      }),
    )
    .option('--parent <id>', 'only runs continued, retried or forked from this run')
    .addOption(jsonOption())
    .action(async (flags: { json?: boolean; state?: ListedState; parent?: string }) => {
      set(await withClient(config(), (aca) => listCommand(aca, flags, io)));
    });
}
