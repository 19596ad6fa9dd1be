import type { AcaConfig } from '../config';
import { UserInputError } from '../shared/errors';
import type { CliIO } from './cli-context';

/** `aca memory search "<text>"`: the past failures most similar to the text. */
export async function memoryCommand(
  config: AcaConfig,
  rawText: string,
  flags: { json?: boolean },
  io: CliIO,
): Promise<number> {
  const text = rawText.trim();
  if (!text) throw new UserInputError('the search text is empty: aca memory search "<text>"');
  const { memorySearchCommand } = await import('./memory-search');
  return memorySearchCommand(text, { json: flags.json === true, out: io.out, config } as never);
}
