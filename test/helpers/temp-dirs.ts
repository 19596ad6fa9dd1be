import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * A maker of temporary folders for one test file, all removed after its tests: call at the top
 * level of the file (it registers the `afterAll`).
 */
export function tempDirs(defaultPrefix: string): (prefix?: string) => string {
  const made: string[] = [];
  afterAll(() => made.splice(0).forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  return (prefix = defaultPrefix) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
