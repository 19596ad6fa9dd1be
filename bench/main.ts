/**
 * Entry point of the benchmarks, run from the sources: `npm run bench -- [part ...] [options]`
 * (tsx bench/main.ts). Exit code 0 when every part ran, 1 when one failed (or, with --strict,
 * missed its goal), 2 for bad arguments.
 */
import { Command, CommanderError } from 'commander';
import { UserInputError } from '../src/shared/errors';
import { benchCommand, PARTS } from './bench-command';
import { addBenchOptions, type BenchFlags } from './bench-options';
import type { BenchIO } from './bench-util';

const BAD_INPUT = 2;

const processIO: BenchIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  progress: (line) => process.stderr.write(`${line}\n`),
};

/** Runs the benchmarks `argv` names (the arguments after `npm run bench --`); returns the exit code. */
export async function runBench(argv: string[], io: BenchIO = processIO): Promise<number> {
  let code = 0;
  const program = addBenchOptions(
    new Command('npm run bench --')
      .description('benchmarks: where time and tokens go (results under bench/results)')
      .argument('[parts...]', `all (default), ${PARTS.join(', ')}`)
      .exitOverride()
      .configureOutput({
        writeOut: (text) => io.out(text.trimEnd()),
        writeErr: (text) => io.progress(text.trimEnd()),
        outputError: (text) => io.progress(`bench: ${text.replace(/^error: /, '').trimEnd()}`),
      }),
  ).action(async (parts: string[], flags: BenchFlags) => {
    code = await benchCommand(parts, flags, io);
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : BAD_INPUT;
    if (err instanceof UserInputError) {
      io.progress(`bench: ${err.message}`);
      return BAD_INPUT;
    }
    throw err;
  }
}

if (require.main === module) {
  runBench(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
