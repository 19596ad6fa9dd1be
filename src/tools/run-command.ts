import { z } from 'zod';
import { MAX_COMMAND_CHARS } from '../sandbox';
import { printableLine } from '../shared/terminal-text';

/** An agent's command runs this long unless it asks for less; the worker's ACA_MAX_WALL_SECONDS caps it. */
export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 120;
/** Characters of the command line the Web UI and `aca log` show after the tool's name. */
const TARGET_CHARS = 80;

export const RUN_COMMAND_DESCRIPTION = [
  "Run a shell command line (bash -c) in the workspace, in the same sandbox as the tests: no network, no secrets, the repository's dependency folders and the acceptance tests read-only.",
  `It is killed after timeout_seconds (default and most ${DEFAULT_COMMAND_TIMEOUT_SECONDS}), and nothing it started keeps running after it returns.`,
  'The answer has exit_code, stdout and stderr (each clipped to its beginning and end, with the bytes cut counted), duration_ms and timed_out.',
  'Use it to run a script, a single test or a build step and read its output; it never changes whether the tests pass.',
].join(' ');

export const runCommandParameters = z.strictObject({
  command: z
    .string()
    .min(1)
    .max(MAX_COMMAND_CHARS)
    .refine((text) => text.trim() !== '', 'the command line is blank')
    .refine((text) => !text.includes('\0'), 'the command line holds a NUL character')
    .describe(
      'The command line, run by bash in the workspace root, e.g. "python -m pytest tests/test_x.py -x -q".',
    ),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(DEFAULT_COMMAND_TIMEOUT_SECONDS)
    .optional()
    .describe(`Seconds after which the command is killed; ${DEFAULT_COMMAND_TIMEOUT_SECONDS} when omitted.`),
});

export type RunCommandArguments = z.infer<typeof runCommandParameters>;

/**
 * The run_command tool: each call runs as an activity of its own on the host that holds the run's
 * files (activities/command-activities.ts), where it takes one of the host's test slots.
 */
export const runCommandTool = {
  kind: 'command' as const,
  name: 'run_command' as const,
  description: RUN_COMMAND_DESCRIPTION,
  parameters: runCommandParameters,
  /** What the Web UI shows after the tool's name: the command line's start, on one line. */
  target: (args: RunCommandArguments): string => commandTarget(args.command),
};

/**
 * A command line shortened to one line of at most TARGET_CHARS characters, its hidden characters
 * shown as escapes: the target is the step's summary in workflow history, which the Web UI and
 * Temporal's own CLI show as it is (a terminal escape or bidi override of the model's must not).
 */
export function commandTarget(command: string): string {
  const line = printableLine(command.replace(/\s+/g, ' ').trim());
  return line.length > TARGET_CHARS ? `${line.slice(0, TARGET_CHARS - 1)}…` : line;
}
