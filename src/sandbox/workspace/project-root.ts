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

/**
 * The node_modules folder that holds the Jest and TypeScript aca runs projects' tests with, as
 * Node resolves them from aca itself: aca's own in a checkout, the project's (hoisted) when aca
 * is installed as a package.
 */
export function toolchainNodeModules(): string {
  const jest = path.dirname(require.resolve('jest/package.json'));
  const typescript = path.dirname(require.resolve('typescript/package.json'));
  const folder = path.dirname(jest);
  if (path.dirname(typescript) !== folder) {
    throw new Error(
      `jest (${jest}) and typescript (${typescript}) must be installed in one node_modules folder`,
    );
  }
  return folder;
}
