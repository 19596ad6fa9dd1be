import type { CommanderError } from 'commander';
import { printableLine } from '../shared/terminal-text';
import { EXIT, type CliIO } from './cli-context';

/** Maps what commander refuses (unknown option, missing argument, …) to exit 2 with one line. */
export function commanderExit(err: CommanderError, io: CliIO): number {
  if (err.exitCode === 0) return EXIT.success;
  // The help was printed to stderr already: a command that needs a subcommand got none.
  if (err.code === 'commander.help') return EXIT.badInput;
  // Commander puts its suggestion on a line of its own; aca says it on the same line.
  const message = err.message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean (.+)\?\)$/, '; did you mean $1?');
  io.err(printableLine(`aca: ${message}`));
  return EXIT.badInput;
}
