import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, gitBytes, type GitTarget } from '../git/git';

/** The files pytest collects by default (`python_files = test_*.py *_test.py`). */
const PYTEST_FILE = /(^|\/)(test_[^/]*|[^/]*_test)\.py$/;
/** A file inside a folder named as test folders are: its helpers are test code, not code under test. */
const TEST_FOLDER = /(^|\/)tests?\//;
/** Beyond these the rest of a suite is left to the run's own process (docs/sandbox.md). */
const MAX_FILES = 5000;
const MAX_FILE_BYTES = 1024 * 1024;
// Under git()'s 64 MiB bound on what one git process may print.
const MAX_TOTAL_BYTES = 48 * 1024 * 1024;

/**
 * Writes the test files of `commit` (pytest's default names, plus `alsoFiles`, the named targets'
 * files) into `folder` at their repository paths, for the verdict process to judge as the commit
 * has them (see BaseTests in the sandbox). Only regular files: a link at the commit is no test
 * file of its own. Returns the files written.
 */
export async function writeBaseTestFiles(
  target: GitTarget,
  commit: string,
  folder: string,
  alsoFiles: readonly string[] = [],
): Promise<string[]> {
  const wanted = new Set(alsoFiles);
  return writeBlobs(target, commit, folder, (file) => PYTEST_FILE.test(file) || wanted.has(file));
}

/**
 * Writes the commit's other Python files in its test folders (any folder named `tests` or `test`:
 * package `__init__.py` files, helper modules the tests import; not test files, not conftest.py)
 * into `folder`, for the verdict process to import as the commit has them.
 */
export async function writeBaseTestHelpers(
  target: GitTarget,
  commit: string,
  folder: string,
): Promise<string[]> {
  return writeBlobs(
    target,
    commit,
    folder,
    (file) =>
      file.endsWith('.py') &&
      !PYTEST_FILE.test(file) &&
      TEST_FOLDER.test(file) &&
      path.posix.basename(file) !== 'conftest.py',
  );
}

async function writeBlobs(
  target: GitTarget,
  commit: string,
  folder: string,
  wanted: (file: string) => boolean,
): Promise<string[]> {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit)) throw new Error(`"${commit}" is not a full commit id`);
  const blobs: { file: string; oid: string }[] = [];
  let total = 0;
  const listing = await git(target, ['ls-tree', '-r', '-z', '-l', '--full-tree', commit]);
  for (const entry of listing.split('\0')) {
    const match = /^(100644|100755) blob ([0-9a-f]+) +(\d+)\t(.+)$/s.exec(entry);
    if (!match) continue;
    const file = match[4]!;
    const size = Number(match[3]);
    if (!wanted(file)) continue;
    if (file.split('/').some((part) => part === '' || part === '.' || part === '..')) continue;
    if (size > MAX_FILE_BYTES || total + size > MAX_TOTAL_BYTES) continue;
    total += size;
    blobs.push({ file, oid: match[2]! });
    if (blobs.length >= MAX_FILES) break;
  }
  if (blobs.length === 0) return [];
  const batch = await gitBytes(
    target,
    ['cat-file', '--batch'],
    Buffer.from(blobs.map((b) => `${b.oid}\n`).join('')),
  );
  const written: string[] = [];
  let at = 0;
  for (const { file } of blobs) {
    const headerEnd = batch.indexOf(0x0a, at);
    if (headerEnd < 0) break;
    const [, type, size] = batch.toString('utf8', at, headerEnd).split(' ');
    if (type !== 'blob') break;
    const length = Number(size);
    const content = batch.subarray(headerEnd + 1, headerEnd + 1 + length);
    at = headerEnd + 1 + length + 1;
    const destination = path.join(folder, file);
    fs.mkdirSync(path.dirname(destination), { recursive: true, mode: 0o755 });
    fs.writeFileSync(destination, content, { mode: 0o444 });
    written.push(file);
  }
  return written;
}
