import type { AcaConfig } from '../config';
import { parseArgs } from './args';
import { UserInputError } from '../shared/errors';
import type { CliIO } from './cli-context';

/** `aca memory search "<text>"`: the past failures most similar to the text. */
export async function memoryCommand(config: AcaConfig, argv: string[], io: CliIO): Promise<number> {
  const { positionals, flags } = parseArgs(argv, { json: { type: 'boolean' } });
  const text = positionals.join(' ').trim();
  if (!text) throw new UserInputError('usage: aca memory search "<text>" [--json]');
  const { memorySearchCommand } = await import('./memory-search');
  return memorySearchCommand(text, { json: flags.json === true, out: io.out, config } as never);
}
