import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Language, TestCaseResult } from '../../shared/types';
import { PYTHON } from '../runners/pytest-runner';
import { HOST_TOOL_ENV } from '../../shared/executables';
import { shippedFile } from '../shipped-files';
import { runViaHelper } from '../../process';

/**
 * The user's acceptance tests (`--tests DIR`). The workspace holds copies at the same relative
 * paths for the agents to read; inside the sandbox each copy is covered by the original, mounted
 * read-only, and every folder above it is mounted onto itself, which makes it a mount point that
 * cannot be renamed or removed from inside. So code under test can neither edit an acceptance
 * test (whatever the file's mode) nor move its folder aside and put another file at its path.
 * The copies are compared with the originals before and after every run.
 */
export interface AcceptanceFiles {
  /** The folder given with `--tests`, on the worker: the originals. */
  sourceDir: string;
  /** Every file under it, relative to it; the copies sit at the same paths in the workspace. */
  files: string[];
  /**
   * In a run on a repository: its conftest.py files and pytest configuration file as the base
   * commit has them (with the acceptance tests added), which the verdict process loads in place of
   * whatever the workspace holds by then (`ini` names the configuration file among `files`).
   */
  baseConfig?: { sourceDir: string; files: string[]; ini: string | null };
}

const PYTHON_TEST_FILE = /(^|\/)(test_[^/]*|[^/]*_test)\.py$/;
const JEST_TEST_FILE = /\.(test|spec)\.[jt]sx?$/;

/** The acceptance files that hold tests, as the runner of `language` finds them. */
export function acceptanceTestFiles(language: Language, acceptance: AcceptanceFiles): string[] {
  const pattern = language === 'python' ? PYTHON_TEST_FILE : JEST_TEST_FILE;
  return acceptance.files.filter((file) => pattern.test(file));
}

/** Folders (relative, parents first) that hold acceptance files: each is mounted onto itself. */
export function acceptanceFolders(acceptance: AcceptanceFiles): string[] {
  const folders = new Set<string>();
  for (const file of acceptance.files) {
    const parts = file.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  return [...folders].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
}

/**
 * Makes every workspace copy equal its original again, and says which were not. Runs only
 * while nothing of the run is alive (before the sandbox starts, after it is torn down), and
 * never follows a link: a link or a non-folder in the way is removed, not written through.
 */
export function restoreAcceptanceCopies(workspace: string, acceptance: AcceptanceFiles): string[] {
  const changed: string[] = [];
  for (const file of acceptance.files) {
    const original = fs.readFileSync(path.join(acceptance.sourceDir, file));
    const parts = file.split('/');
    let dir = workspace;
    for (const part of parts.slice(0, -1)) {
      dir = path.join(dir, part);
      const st = lstatOrNull(dir);
      if (st?.isDirectory()) continue;
      if (st) fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { mode: 0o755 });
    }
    const target = path.join(dir, parts[parts.length - 1]);
    if (sameContent(target, original)) continue;
    changed.push(file);
    fs.rmSync(target, { recursive: true, force: true });
    const fd = fs.openSync(
      target,
      fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
      0o444,
    );
    try {
      fs.writeFileSync(fd, original);
    } finally {
      fs.closeSync(fd);
    }
  }
  return changed;
}

function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch {
    return null;
  }
}

/** Whether `file` is a regular file (not followed if a link) holding exactly `expected`. */
export function sameContent(file: string, expected: Buffer): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size !== expected.length) return false;
    return fs.readFileSync(fd).equals(expected);
  } finally {
    fs.closeSync(fd);
  }
}

/** What the acceptance files define, read with Python's own parser (nothing is imported or run). */
export interface PythonAcceptanceTests {
  /** `file::test_x` and `file::TestClass::test_y`, as pytest names them. */
  ids: string[];
  /**
   * The ids whose original asks for a skip or an expected failure: a skip or xfail mark on the
   * test, its class or its module (`pytestmark`), `pytest.param(..., marks=...)`, or a skip call in
   * the test or in any other function of its file (a fixture that skips).
   */
  maySkip: string[];
}

/**
 * The test functions an acceptance file defines: only what is visible in the file's own top level
 * counts; a parametrized test matches every `[…]` variant. Undefined when the worker has no Python
 * or a file does not parse (pytest will then report the file's collection error itself).
 */
export async function expectedPythonTests(
  sourceDir: string,
  testFiles: string[],
): Promise<PythonAcceptanceTests | undefined> {
  if (testFiles.length === 0) return { ids: [], maySkip: [] };
  const args = [
    '-I',
    '-c',
    shippedFile('pythonAcceptanceTests'),
    ...testFiles.flatMap((f) => [f, path.join(sourceDir, f)]),
  ];
  // Through the spawn helper: a fork of the worker costs more than this python's start.
  return runViaHelper({
    command: PYTHON,
    args,
    cwd: '/',
    env: HOST_TOOL_ENV,
    timeoutMs: 20_000,
    maxOutputBytes: 16 * 1024 * 1024,
  }).then(
    (result) => {
      if (result.code !== 0 || result.timedOut || result.overflowed) return undefined;
      try {
        const parsed: unknown = JSON.parse(result.stdout.toString('utf8'));
        const strings = (v: unknown): v is string[] =>
          Array.isArray(v) && v.every((x) => typeof x === 'string');
        const { ids, maySkip } = (parsed ?? {}) as { ids?: unknown; maySkip?: unknown };
        return strings(ids) && strings(maySkip) ? { ids, maySkip } : undefined;
      } catch {
        return undefined;
      }
    },
    () => undefined,
  );
}

/**
 * Holds the run's cases against the acceptance tests: each acceptance test file must have
 * reported tests, each expected test must have run, and a skipped acceptance test has not
 * passed, unless `honestSkip` says the acceptance file skips it itself (jest-declared-skips.ts; for
 * pytest the verdict process judges each skip, pytest-verdict-stream.ts).
 * What is missing becomes an error case, so it counts against the pass rate.
 */
export function checkAcceptanceCases(
  cases: TestCaseResult[],
  testFiles: string[],
  expectedIds: string[] | undefined,
  honestSkip?: (caseName: string) => boolean,
): { cases: TestCaseResult[]; missing: string[] } {
  const isAcceptance = (name: string): boolean =>
    testFiles.some((file) => name === file || name.startsWith(`${file}::`));
  const checked = cases.map((c): TestCaseResult =>
    c.status === 'skipped' && isAcceptance(c.name) && !honestSkip?.(c.name)
      ? { ...c, status: 'error', message: 'an acceptance test given by the user must run; it was skipped' }
      : c,
  );
  const missing: string[] = [];
  for (const file of testFiles) {
    if (!cases.some((c) => c.name === file || c.name.startsWith(`${file}::`))) missing.push(file);
  }
  for (const id of expectedIds ?? []) {
    if (missing.some((file) => id.startsWith(`${file}::`))) continue;
    // A parametrized variant is `id[params]`, its parameters without `::` (which would make it a
    // node of its own): a case named `id[::x]` is not the acceptance test `id`.
    if (
      !cases.some(
        (c) => c.name === id || (c.name.startsWith(`${id}[`) && !c.name.slice(id.length).includes('::')),
      )
    )
      missing.push(id);
  }
  for (const name of missing) {
    checked.push({
      name,
      status: 'error',
      message:
        'acceptance test given by the user was not run: something deselected, ignored or failed to collect it',
    });
  }
  return { cases: checked, missing };
}
