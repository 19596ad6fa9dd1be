import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git } from '../repo';

/** The file a finished copy holds, naming where it came from; a folder without it is not a copy. */
const SOURCE_FILE = 'aca-eval-source';

/**
 * Makes the repository copy at `dest` unless one is there: a new repository filled by `fill` in a
 * folder of its own, then renamed into place, so no step ever sees half a copy. When another step
 * made the same copy meanwhile, that one is kept.
 */
export async function makeCopyOnce(
  dest: string,
  source: string,
  fill: (gitDir: string) => Promise<void>,
): Promise<void> {
  if (fs.existsSync(path.join(dest, '.git', SOURCE_FILE))) return;
  const tmp = `${dest}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    await git({ gitDir: path.join(tmp, '.git') }, ['init', '--quiet', tmp]);
    await fill(path.join(tmp, '.git'));
    fs.writeFileSync(path.join(tmp, '.git', SOURCE_FILE), `${source}\n`);
    try {
      fs.renameSync(tmp, dest);
    } catch (err) {
      if (!fs.existsSync(path.join(dest, '.git', SOURCE_FILE))) throw err;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
