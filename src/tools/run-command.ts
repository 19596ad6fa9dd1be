import { z } from 'zod';

/** How long a command may run when the model does not ask for less. */
export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 120;

export const RUN_COMMAND_DESCRIPTION =
  'Run a shell command line (bash -c) in the workspace, sandboxed as the tests are: no network, no secrets. Use it to reproduce a bug, run one test, or check your work before finishing.';

export const runCommandParameters = z.strictObject({
  command: z.string().min(1).max(16_000),
  timeout_seconds: z.number().int().min(1).max(3_600).optional(),
});
