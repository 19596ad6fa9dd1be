export const EXIT = { success: 0, failed: 1, badInput: 2, unreachable: 3, cancelled: 4 } as const;

export { UnreachableError } from '../shared/errors';

export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  /** Whether stdout is a terminal that can redraw one line. */
  isTTY: boolean;
}

export const processIO: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  isTTY: Boolean(process.stdout.isTTY),
};
