import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, gitBytes, type GitTarget } from '../git/git';

/** A repository's own pytest configuration at one commit, written to a folder of the worker's. */
export interface BaseTestConfig {
  sourceDir: string;
  /** Repository-relative: every conftest.py, and the root's configuration file pytest would read. */
  files: string[];
  /** The one of `files` that holds pytest's settings, if any. */
  ini: string | null;
}

/** Root files pytest reads its settings from, in its order, with the section that makes each count. */
const INI_FILES: [string, RegExp | null][] = [
  ['pytest.ini', null],
  ['.pytest.ini', null],
  ['pyproject.toml', /^\[tool\.pytest\.ini_options\]/m],
  ['tox.ini', /^\[pytest\]/m],
  ['setup.cfg', /^\[tool:pytest\]/m],
];
const MAX_FILES = 200;
const MAX_FILE_BYTES = 1024 * 1024;

/**
 * The conftest.py files and pytest configuration file of `commit` (the base commit with the
 * acceptance tests added: nothing the run wrote), for the verdict process to load in place of what
 * the workspace holds now. Files in `exclude` (the acceptance files, mounted on their own) are left out.
 */
export async function writeBaseTestConfig(
  target: GitTarget,
  commit: string,
  folder: string,
  exclude: readonly string[],
): Promise<BaseTestConfig> {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit)) throw new Error(`"${commit}" is not a full commit id`);
  const listed = (await git(target, ['ls-tree', '-r', '-z', '--name-only', commit])).split('\0');
  const conftests = listed.filter(
    (file) => (file === 'conftest.py' || file.endsWith('/conftest.py')) && !exclude.includes(file),
  );
  const files: string[] = [];
  let ini: string | null = null;
  const write = (file: string, blob: Buffer): void => {
    const parts = file.split('/');
    if (parts.some((part) => part === '' || part === '.' || part === '..')) return;
    const target = path.join(folder, file);
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    fs.writeFileSync(target, blob, { mode: 0o444 });
    files.push(file);
  };
  for (const file of conftests.slice(0, MAX_FILES)) {
    const blob = await gitBytes(target, ['cat-file', 'blob', `${commit}:${file}`]);
    if (blob.length <= MAX_FILE_BYTES) write(file, blob);
  }
  for (const [name, section] of INI_FILES) {
    if (!listed.includes(name)) continue;
    const blob = await gitBytes(target, ['cat-file', 'blob', `${commit}:${name}`]);
    if (blob.length > MAX_FILE_BYTES || (section && !section.test(blob.toString('utf8')))) continue;
    write(name, blob);
    ini = name;
    break;
  }
  return { sourceDir: folder, files, ini };
}
