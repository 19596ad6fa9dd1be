import { Command } from 'commander';
import { loadConfig, type AcaConfig } from '../config';
import { EXIT, type CliIO } from './cli-context';
import type { ProgramContext } from './program-context';
import { addEvalCommands } from './program-eval';
import { addInspectCommands, addListCommand } from './program-inspect';
import { addLocalCommands } from './program-local';
import { addReviewCommands } from './program-review';
import { addRunCommands } from './program-run';

const EXIT_CODES_HELP = `
Exit codes: 0 success, 1 run failed, 2 bad input, 3 Temporal or database unreachable,
4 cancelled or interrupted.`;

/**
 * The `aca` command line: every command, argument and option defined once, in the program-*.ts
 * files by command group (added in the order `aca --help` lists them), with the help text generated
 * from these definitions. Actions set `exitCode` rather than exiting, so the caller decides what
 * happens to the process.
 */
export function buildProgram(io: CliIO): { program: Command; exitCode: () => number } {
  let code: number = EXIT.success;
  const config = (): AcaConfig => loadConfig();
  const program = new Command('aca')
    .description('A durable autonomous coding agent on Temporal.')
    .addHelpText('after', EXIT_CODES_HELP)
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      // Help asked for wrongly (`aca memory`) goes to stderr; commander's error lines are
      // replaced by one `aca: …` line (see commanderExit).
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
      outputError: () => undefined,
    })
    .exitOverride();
  const set = (value: number): void => {
    code = value;
  };
  const ctx: ProgramContext = { io, config, set };
  addRunCommands(program, ctx);
  addInspectCommands(program, ctx);
  addReviewCommands(program, ctx);
  addListCommand(program, ctx);
  addLocalCommands(program, ctx);
  addEvalCommands(program, ctx);
  return { program, exitCode: () => code };
}
