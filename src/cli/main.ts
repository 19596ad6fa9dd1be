import { CommanderError } from 'commander';
import { AcaError, UnreachableError, UserInputError } from '../shared/errors';
import { printable } from '../shared/terminal-text';
import { EXIT, processIO, type CliIO } from './cli-context';
import { buildProgram } from './program';
import { commanderExit } from './commander-exit';

/** Entry point of the `aca` command; returns the exit code. */
export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const { program, exitCode } = buildProgram(io);
  if (argv.length === 0) {
    io.err(program.helpInformation().trimEnd());
    return EXIT.badInput;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode();
  } catch (err) {
    if (err instanceof CommanderError) return commanderExit(err, io);
    if (err instanceof UserInputError) {
      io.err(errorText(err.message));
      return EXIT.badInput;
    }
    if (err instanceof UnreachableError) {
      io.err(errorText(err.message));
      return EXIT.unreachable;
    }
    const message = err instanceof AcaError || err instanceof Error ? err.message : String(err);
    io.err(errorText(message));
    return EXIT.failed;
  }
}

/**
 * An error as printed: its message may quote a run's text (a reason, a file name, git's stderr),
 * so controls show as escapes, and lines after the first are indented so that none can pass
 * for a line of aca's own.
 */
export function errorText(message: string): string {
  return `aca: ${printable(message).replace(/\n/g, '\n  ')}`;
}
