import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { checkRunRef } from '../shared/run-ref';

/**
 * Documents kept as one file each under `root`, named by their run reference (checked, so a
 * reference never leads out of `root`). A save writes a fresh name created exclusively, so
 * nothing planted there in advance is written through, then renames it over the old file.
 */
export class JsonFiles {
  constructor(
    readonly root: string,
    private readonly what: 'conversation' | 'report',
  ) {}

  private fileFor(ref: string): string {
    return path.join(this.root, `${checkRunRef(ref, this.what)}.json`);
  }

  async put(ref: string, body: string): Promise<void> {
    const file = this.fileFor(ref);
    const temporary = `${file}.${randomBytes(8).toString('hex')}.tmp`;
    const write = () => fs.writeFile(temporary, body, { encoding: 'utf8', flag: 'wx' });
    try {
      await write();
    } catch (err) {
      // The run's first document makes its folder: every later save skips asking for it.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await fs.mkdir(path.dirname(file), { recursive: true });
      await write();
    }
    await fs.rename(temporary, file);
  }

  /** The document's text, or null when nothing is stored under `ref`. */
  async get(ref: string): Promise<string | null> {
    try {
      return await fs.readFile(this.fileFor(ref), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async has(ref: string): Promise<boolean> {
    // A bad reference is an error, not "absent": outside the try.
    const file = this.fileFor(ref);
    try {
      await fs.access(file);
      return true;
    } catch {
      return false;
    }
  }
}
