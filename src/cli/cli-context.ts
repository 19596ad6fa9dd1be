import { printableOutput } from '../shared/terminal-text';

export { EXIT } from '../shared/exit-codes';

export { UnreachableError } from '../shared/errors';

export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  /** Bytes for stdout exactly as given (`aca diff --raw`); process.stdout when absent. */
  outBytes?(bytes: Uint8Array): void;
  /** Whether stdout is a terminal that can redraw one line. */
  isTTY: boolean;
  /** Asks the person at the terminal a yes/no question; absent when nobody can answer. */
  confirm?: (question: string) => Promise<boolean>;
}

async function askOnTerminal(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${printableOutput(question)} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

/**
 * The real terminal. Commands render what they print with terminal-text already; this is the
 * last guard, so that text a command forgot to render still cannot act on the terminal.
 */
export const processIO: CliIO = {
  out: (line) => process.stdout.write(`${printableOutput(line)}\n`),
  err: (line) => process.stderr.write(`${printableOutput(line)}\n`),
  outBytes: (bytes) => process.stdout.write(bytes),
  isTTY: Boolean(process.stdout.isTTY),
  ...(process.stdin.isTTY && process.stderr.isTTY ? { confirm: askOnTerminal } : {}),
};
