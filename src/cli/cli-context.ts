export const EXIT = { success: 0, failed: 1, badInput: 2, unreachable: 3, cancelled: 4 } as const;

export { UnreachableError } from '../shared/errors';

export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  /** Whether stdout is a terminal that can redraw one line. */
  isTTY: boolean;
  /** Asks the person at the terminal a yes/no question; absent when nobody can answer. */
  confirm?: (question: string) => Promise<boolean>;
}

async function askOnTerminal(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export const processIO: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  isTTY: Boolean(process.stdout.isTTY),
  ...(process.stdin.isTTY && process.stderr.isTTY ? { confirm: askOnTerminal } : {}),
};
