/**
 * Named targets: tests a run must leave passing whatever the baseline said. A target is a pytest
 * node id (`tests/test_x.py::TestY::test_z[1]`), a Jest id (`<file>::<full name>`), or a test
 * file meaning all its tests. Pure: the workflow bundle includes this file.
 */

export type TargetOutcome = 'passed' | 'failed' | 'error' | 'missing';

export interface TargetResult {
  id: string;
  outcome: TargetOutcome;
}

/** A test case as a report names it, with its status. */
interface Case {
  name: string;
  status: 'passed' | 'failed' | 'error' | 'skipped';
}

/** Longer ids are no test's; they would only bloat history. */
export const MAX_TARGET_CHARS = 1000;
/** Targets one run may name, from every source together. */
export const MAX_TARGETS = 50;

/** The file a target names: everything before its first `::`. */
export function targetFile(id: string): string {
  const at = id.indexOf('::');
  return at < 0 ? id : id.slice(0, at);
}

/** What is wrong with a target as written (a relative path, then names), or null when nothing is. */
export function targetProblem(id: string): string | null {
  if (id.trim() === '') return 'is empty';
  if (id !== id.trim()) return 'has spaces around it';
  if (id.length > MAX_TARGET_CHARS) return `is longer than ${MAX_TARGET_CHARS} characters`;
  if (/[\u0000-\u001f\u007f]/.test(id)) return 'contains a control character';
  const file = targetFile(id);
  if (file === '') return 'names no file before "::"';
  if (file.startsWith('/') || file.startsWith('-'))
    return 'must start with a path relative to the repository';
  const parts = file.split('/');
  if (parts.some((p) => p === '..' || p === '.' || p === '')) {
    return 'must name a file inside the repository (no "..", "." or empty path parts)';
  }
  if (file.includes('\\')) return 'must use "/" between folders';
  return null;
}

/** The targets of several sources (command line, `.aca.json`, the Planner), each once, in order. */
export function mergeTargets(...lists: ReadonlyArray<readonly string[] | undefined>): string[] {
  const merged: string[] = [];
  for (const list of lists) for (const id of list ?? []) if (!merged.includes(id)) merged.push(id);
  return merged;
}

/** A report name whose first part is a path, as pytest node ids and Jest ids are. */
function isPathLike(name: string): boolean {
  const file = targetFile(name);
  return file.includes('/') || /\.(py|[cm]?[jt]sx?)$/.test(file);
}

/**
 * A pytest id spelled as pytest's JUnit writer does, all in dots: `tests/test_a.py::TestX::t[1]`
 * and `tests.test_a.TestX::t[1]` both become `tests.test_a.TestX.t[1]`.
 */
function dotted(name: string): string {
  const bracket = name.indexOf('[');
  const address = bracket < 0 ? name : name.slice(0, bracket);
  const params = bracket < 0 ? '' : name.slice(bracket);
  const parts = address.split('::');
  parts[0] = parts[0]!.replace(/\.py$/, '').replace(/\//g, '.');
  return parts.join('.') + params;
}

function within(name: string, target: string, separator: string): boolean {
  if (name === target) return true;
  if (name.startsWith(target + separator)) return true;
  // A parametrized test named without its parameters means all of them.
  return !target.includes('[') && name.startsWith(`${target}[`);
}

/**
 * Whether a report's test case is one of the target's: the same id, a test inside the named file
 * or class (`::` after it), or one parametrization of the named test. A case named the JUnit way
 * (`tests.test_a.TestX::t`, from a project's own command) is matched against a pytest target in
 * that spelling.
 */
export function caseOfTarget(caseName: string, target: string): boolean {
  if (within(caseName, target, '::')) return true;
  if (isPathLike(caseName) || !targetFile(target).endsWith('.py')) return false;
  return within(dotted(caseName), dotted(target), '.');
}

/**
 * How a target fared in a test run: failed when any of its cases failed, else error when any
 * errored, else passed when any passed; missing when none of its cases ran (none found, or all
 * skipped). In a run that did not complete, a target with no case is an error, not missing.
 */
export function targetOutcome(target: string, cases: readonly Case[], completed: boolean): TargetOutcome {
  const statuses = new Set(cases.filter((c) => caseOfTarget(c.name, target)).map((c) => c.status));
  if (statuses.has('failed')) return 'failed';
  if (statuses.has('error')) return 'error';
  if (statuses.has('passed')) return 'passed';
  return completed || statuses.size > 0 ? 'missing' : 'error';
}

/**
 * Each target's outcome in a test run. With the baseline's cases, a target also needs every case
 * it had there: parameters or tests computed by the code under test cannot drop the failing ones.
 */
export function judgeTargets(
  targets: readonly string[],
  cases: readonly Case[],
  completed: boolean,
  baseline?: readonly Case[],
): TargetResult[] {
  const names = new Set(cases.map((c) => c.name));
  return targets.map((id) => {
    const outcome = targetOutcome(id, cases, completed);
    const lost = baseline?.some((c) => caseOfTarget(c.name, id) && !names.has(c.name)) ?? false;
    return { id, outcome: outcome === 'passed' && lost ? 'missing' : outcome };
  });
}

/** Targets no case of the run belongs to, not even a skipped one: tests that do not exist. */
export function unknownTargets(targets: readonly string[], cases: readonly Case[]): string[] {
  return targets.filter((id) => !cases.some((c) => caseOfTarget(c.name, id)));
}

/**
 * One line naming each target and its outcome, e.g. `a.py::t failed, b.py passed`; `name` shows
 * an id (a terminal quotes what it could act on).
 */
export function describeTargets(
  targets: readonly TargetResult[],
  name: (id: string) => string = (id) => id,
): string {
  return targets.map((t) => `${name(t.id)} ${t.outcome}`).join(', ');
}

/**
 * Whether a test run ends the run in SUCCESS: no regression (the run's verdict) and every target
 * passing. Baseline failures are excused for other tests, never for a target.
 */
export function attemptPassed(run: { success: boolean; targets?: readonly TargetResult[] }): boolean {
  return run.success && (run.targets ?? []).every((t) => t.outcome === 'passed');
}
