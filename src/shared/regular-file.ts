/**
 * Reads a small file that something untrusted may have replaced. A plain readFileSync opens
 * without O_NONBLOCK, so a FIFO there blocks the worker's whole event loop until someone writes
 * to it (forever, when nobody does); a link to /dev/zero or a huge file makes it read without
 * end or past the memory it has. Here the open never blocks, the opened file (not the path,
 * which can change in between) must be a regular file, and no more than `maxBytes` is read.
 */
import * as fs from 'node:fs';
import { SystemError } from './errors';

/** What stood at the path instead of a regular file of a bounded size. */
export type IrregularKind =
  | 'fifo'
  | 'socket'
  | 'directory'
  | 'character device'
  | 'block device'
  | 'symbolic link'
  | 'too large'
  | 'not private';

export class IrregularFileError extends SystemError {
  constructor(
    readonly file: string,
    readonly kind: IrregularKind,
    /** The bound that was passed, for `too large`. */
    readonly maxBytes: number,
  ) {
    super(
      kind === 'too large'
        ? `${file} is larger than ${maxBytes} bytes; refusing to read it`
        : kind === 'not private'
          ? `${file} is not a file of this user's that only this user may write; refusing to read it`
          : `${file} is a ${kind}, not a regular file; refusing to read it`,
    );
  }
}

export interface RegularFileOptions {
  maxBytes: number;
  /**
   * Follow a link at the path itself (as git does for its own files). Off by default: a link
   * planted in a work tree must not be followed. Links in the folders above are always followed.
   */
  followLinks?: boolean;
  /**
   * Only a file this process's user owns and nobody else may write (group or others): for a file
   * in a folder another user might reach, such as a cache under XDG_CACHE_HOME.
   */
  privateOnly?: boolean;
}

function kindOf(stat: fs.Stats): IrregularKind {
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSocket()) return 'socket';
  if (stat.isDirectory()) return 'directory';
  if (stat.isCharacterDevice()) return 'character device';
  if (stat.isBlockDevice()) return 'block device';
  return 'symbolic link';
}

function isPrivate(stat: fs.Stats): boolean {
  const ownUid = process.getuid?.();
  return (ownUid === undefined || stat.uid === ownUid) && (stat.mode & 0o022) === 0;
}

/**
 * The file's bytes; null when nothing is at the path (or a folder above it is not a folder).
 * Anything but a regular file of at most `maxBytes` bytes is an IrregularFileError.
 */
export function readRegularFile(file: string, options: RegularFileOptions): Buffer | null {
  const { maxBytes } = options;
  const flags =
    fs.constants.O_RDONLY |
    fs.constants.O_NONBLOCK |
    fs.constants.O_NOCTTY |
    (options.followLinks ? 0 : fs.constants.O_NOFOLLOW);
  let fd: number;
  try {
    // Opening a device can act (a tape rewinds, a watchdog arms): look before opening, and check
    // again what was opened, in case the path changed in between.
    const seen = options.followLinks ? fs.statSync(file) : fs.lstatSync(file);
    if (seen.isSymbolicLink()) throw new IrregularFileError(file, 'symbolic link', maxBytes);
    if (!seen.isFile()) throw new IrregularFileError(file, kindOf(seen), maxBytes);
    fd = fs.openSync(file, flags);
  } catch (err) {
    if (err instanceof IrregularFileError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    // O_NOFOLLOW on a link, and a unix socket, which cannot be opened at all.
    if (code === 'ELOOP') throw new IrregularFileError(file, 'symbolic link', maxBytes);
    if (code === 'ENXIO') throw new IrregularFileError(file, 'socket', maxBytes);
    throw err;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new IrregularFileError(file, kindOf(stat), maxBytes);
    if (stat.size > maxBytes) throw new IrregularFileError(file, 'too large', maxBytes);
    if (options.privateOnly && !isPrivate(stat)) throw new IrregularFileError(file, 'not private', maxBytes);
    // The file may change after fstat: read until its end, never past one byte over the bound.
    let buffer = Buffer.alloc(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) throw new IrregularFileError(file, 'too large', maxBytes);
        const larger = Buffer.alloc(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(larger);
        buffer = larger;
      }
      const read = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > maxBytes) throw new IrregularFileError(file, 'too large', maxBytes);
    return buffer.subarray(0, length);
  } finally {
    fs.closeSync(fd);
  }
}
