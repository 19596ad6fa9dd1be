import * as fs from 'node:fs';
import * as path from 'node:path';
import { sameContent } from './acceptance';

/**
 * The repository's own tests as a trusted commit has them (a run's base commit; for an evaluation,
 * the base commit with the instance's test patch), judged in the verdict process from those
 * versions rather than from whatever the workspace holds by then: named targets, the tests the
 * baseline's regression check compares, an evaluation's FAIL_TO_PASS and PASS_TO_PASS. Unlike the
 * `--tests` files they may differ in the workspace (a Tester adds tests to an existing file):
 * the run's own process runs the workspace's version, the verdict process the trusted one, and
 * the verdict's account of a test replaces the run's.
 */
export interface BaseTests {
  /** A folder of the worker's with each file's trusted version at its repository path. */
  sourceDir: string;
  /** Repository-relative test files. */
  files: string[];
  /**
   * The files the verdict runs; the others are only known (mounted and recognised, so that a test
   * class inheriting from one of theirs is the trusted code). Default: all of `files`.
   */
  run?: string[];
  /**
   * The trusted commit's other Python files in its test folders (`tests/`, `test/`: their
   * `__init__.py` and helper modules), in `sourceDir`: the verdict process imports these from their
   * trusted versions wherever the workspace would have them found, so a helper the base tests
   * import (`tests/helpers.py`) cannot be rewritten or shadowed into one that asserts nothing.
   */
  helpers?: string[];
  /** The trusted commit's conftest.py files and pytest configuration file, which the verdict loads. */
  config?: { sourceDir: string; files: string[]; ini: string | null };
  /**
   * Workspace-relative folders the verdict process imports from after the workspace root, as
   * `PYTHONPATH` would add them (an evaluation instance's `PYTHONPATH=src`).
   */
  importPaths?: string[];
}

/** The base commit's helpers in its test folders, less any file given with the acceptance tests. */
export function baseHelpers(base: BaseTests, acceptanceFiles: readonly string[]): string[] {
  return (base.helpers ?? []).filter((file) => !acceptanceFiles.includes(file));
}

/**
 * Copies the helpers into a folder of the verdict's output folder, which only the worker writes:
 * the verdict process reads them in place of the workspace's copies, never mounted over those
 * (the run may have deleted one, or put a package of the same name in front of it).
 */
export function copyHelpers(helpers: { sourceDir: string; files: readonly string[] }, into: string): void {
  for (const file of helpers.files) {
    const target = path.join(into, file);
    fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    fs.copyFileSync(path.join(helpers.sourceDir, file), target, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(target, 0o444);
  }
}

/** What of the base tests the workspace holds now, read without following any link. */
export interface BaseTestsHere {
  /** Files present as regular files under real folders: the verdict process runs these. */
  present: string[];
  /** Of those, the ones equal to their trusted version: the run's own process leaves them out. */
  unchanged: string[];
}

/**
 * Which base test files the verdict process judges. A file the run deleted or replaced by a link
 * is not judged: its tests are gone, which the regression check counts. Runs only while nothing of
 * the sandbox runs.
 */
export function baseTestsHere(workspace: string, base: BaseTests): BaseTestsHere {
  const present: string[] = [];
  const unchanged: string[] = [];
  for (const file of base.files) {
    const size = regularFileSize(workspace, file);
    if (size === null) continue;
    present.push(file);
    const trusted = fs.readFileSync(path.join(base.sourceDir, file));
    if (trusted.length === size && sameContent(path.join(workspace, file), trusted)) unchanged.push(file);
  }
  return { present, unchanged };
}

/** The size of a regular file whose every folder above is a real folder, else null. */
function regularFileSize(root: string, rel: string): number | null {
  const parts = rel.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..')) return null;
  let at = root;
  for (let i = 0; i < parts.length; i++) {
    at = path.join(at, parts[i]!);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(at);
    } catch {
      return null;
    }
    const last = i === parts.length - 1;
    if (last ? !st.isFile() : !st.isDirectory()) return null;
    if (last) return st.size;
  }
  return null;
}
