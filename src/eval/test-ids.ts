import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestCaseResult } from '../shared/types';

/**
 * A pytest JUnit case (`<classname>::<name>`, the classname dotted: `pkg.tests.test_x.TestY`) as
 * a pytest node id (`pkg/tests/test_x.py::TestY::test_z[p]`): the longest leading part of the
 * classname that is a `.py` file of the tree is the file, the rest its classes. Other names are
 * kept as they are.
 */
export function pytestNodeId(caseName: string, tree: string): string {
  const split = caseName.indexOf('::');
  if (split <= 0) return caseName;
  const classname = caseName.slice(0, split);
  const name = caseName.slice(split + 2);
  if (classname.includes('/') || !/^[\w.]+$/.test(classname)) return caseName;
  const parts = classname.split('.');
  for (let i = parts.length; i > 0; i -= 1) {
    const file = `${parts.slice(0, i).join('/')}.py`;
    if (isFileInside(tree, file)) return [file, ...parts.slice(i), name].join('::');
  }
  return caseName;
}

function isFileInside(tree: string, relative: string): boolean {
  try {
    return fs.lstatSync(path.join(tree, relative)).isFile();
  } catch {
    return false;
  }
}

export interface TestVerdict {
  success: string[];
  failure: string[];
}

/** Which of `ids` passed among the cases (a missing id failed, as in SWE-bench). */
export function judgeIds(ids: string[], cases: TestCaseResult[]): TestVerdict {
  const status = new Map<string, TestCaseResult['status']>();
  for (const c of cases) {
    // A name reported twice (a rerun, a teardown error) counts by its worst outcome.
    const before = status.get(c.name);
    if (before === undefined || before === 'passed' || before === 'skipped') status.set(c.name, c.status);
  }
  const success = ids.filter((id) => status.get(id) === 'passed');
  return { success, failure: ids.filter((id) => status.get(id) !== 'passed') };
}

/** Single-quotes a string for a POSIX shell. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}
