/**
 * How `aca log` shows a run_command call: the command line, its exit status, how long it ran and
 * whether its time ran out, then the last lines of its stdout and stderr as workflow history keeps
 * them (the whole output is in the report store, under the reference shown). The caller renders
 * every line for the terminal, so the command line's and the output's control characters and
 * newlines show as escapes and cannot forge or erase a line.
 */

/** Where the output's lines start, under the time column. */
const INDENT = ' '.repeat(12);

interface ShownCommand {
  line?: unknown;
  exitCode?: unknown;
  durationMs?: unknown;
  timedOut?: unknown;
  stdoutTail?: unknown;
  stderrTail?: unknown;
  outputRef?: unknown;
}

/**
 * The outcome of a runCommand step as text: its first line, and the output's tail lines after it.
 * Null for a result that is not a command's (an old history, a refusal: shown the usual way).
 */
export function describeCommand(result: unknown): { outcome: string; output: string[] } | null {
  if (!result || typeof result !== 'object') return null;
  const command = (result as { command?: ShownCommand }).command;
  if (!command || typeof command !== 'object') return null;
  const line = typeof command.line === 'string' ? command.line : '?';
  const seconds = typeof command.durationMs === 'number' ? (command.durationMs / 1000).toFixed(1) : '?';
  const status =
    command.timedOut === true
      ? `timed out after ${seconds} s (killed)`
      : typeof command.exitCode === 'number'
        ? `exit ${command.exitCode} in ${seconds} s`
        : `killed after ${seconds} s`;
  const stored = typeof command.outputRef === 'string' ? ` (output ${command.outputRef})` : '';
  const output = [...tailLines('stdout', command.stdoutTail), ...tailLines('stderr', command.stderrTail)];
  return { outcome: `$ ${line} → ${status}${stored}`, output };
}

function tailLines(stream: string, text: unknown): string[] {
  if (typeof text !== 'string' || text === '') return [];
  return text.split('\n').map((line) => `${INDENT}${stream} | ${line}`);
}
