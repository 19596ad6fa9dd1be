import { checkInstructions, MAX_INSTRUCTIONS_BYTES } from '../api/run-request';
import { UserInputError } from '../shared/errors';
import { IrregularFileError, readRegularFile } from '../shared/regular-file';

/**
 * The text of `--instructions FILE`, read before anything is started: a file of the user's own
 * (a link to one is followed), never more than MAX_INSTRUCTIONS_BYTES of it, UTF-8 text. Anything
 * else is a UserInputError of one line.
 */
export function readInstructionsFile(file: string): string {
  const named = `--instructions ${file}`;
  let bytes: Buffer | null;
  try {
    // Opened without blocking, so a FIFO there is refused instead of waited on.
    bytes = readRegularFile(file, { maxBytes: MAX_INSTRUCTIONS_BYTES, followLinks: true });
  } catch (err) {
    if (err instanceof IrregularFileError) {
      throw new UserInputError(
        err.kind === 'too large'
          ? `${named} is over the limit of ${MAX_INSTRUCTIONS_BYTES} bytes (${MAX_INSTRUCTIONS_BYTES / 1024} KiB)`
          : `${named} is a ${err.kind}, not a file`,
      );
    }
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserInputError(
      `${named} cannot be read: ${code === 'EACCES' || code === 'EPERM' ? 'permission denied' : String(code ?? err)}`,
    );
  }
  if (bytes === null) throw new UserInputError(`${named} cannot be read: no such file`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UserInputError(`${named} is not UTF-8 text`);
  }
  if (text.includes('\0')) throw new UserInputError(`${named} contains a NUL byte; is it a text file?`);
  if (!text.trim()) throw new UserInputError(`${named} is empty`);
  return checkInstructions(text);
}
