import * as fs from 'node:fs';
import * as path from 'node:path';

let cached: string | undefined;

/**
 * The checkout whose node_modules hold jest and typescript. Found by walking up
 * from this file so it works from src/ (ts-jest) and dist/ (built) alike, and
 * wherever the project is installed.
 */
export function projectRoot(): string {
  if (cached) return cached;
  let dir = __dirname;
  for (;;) {
    if (
      fs.existsSync(path.join(dir, 'package.json')) &&
      fs.existsSync(path.join(dir, 'node_modules', 'jest', 'package.json'))
    ) {
      cached = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(
        `cannot find the aca project root (a folder with node_modules/jest) above ${__dirname}`,
      );
    }
    dir = parent;
  }
}
