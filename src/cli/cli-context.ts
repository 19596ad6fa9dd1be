import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { AcaConfig } from '../config';
import { AcaError, UserInputError } from '../shared/errors';
import { RUN_WORKFLOW_TYPE, runHandle, type RunHandle } from './run-handle';

export const EXIT = { success: 0, failed: 1, badInput: 2, unreachable: 3, cancelled: 4 } as const;

/** Temporal or the database cannot be reached: exit code 3. */
export class UnreachableError extends AcaError {}

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

export async function connectClient(config: AcaConfig): Promise<Client> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...config.temporalConnection, connectTimeout: '5s' });
  } catch (err) {
    throw new UnreachableError(
      `cannot reach Temporal at ${config.temporalAddress} (${(err as Error).message}); start it with \`aca up\` or set TEMPORAL_ADDRESS`,
    );
  }
  return new Client({ connection, namespace: config.namespace });
}

/** A handle to an existing run, or a user error naming the unknown id. */
export async function existingRun(
  client: Client,
  id: string,
): Promise<{ handle: RunHandle; status: string }> {
  if (!id) throw new UserInputError('a run id is needed');
  const handle = runHandle(client, id);
  try {
    const description = await handle.describe();
    if (description.type !== RUN_WORKFLOW_TYPE) throw new UserInputError(`${id} is not an aca run`);
    return { handle, status: description.status.name };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new UserInputError(`unknown run id "${id}"`);
    throw err;
  }
}
