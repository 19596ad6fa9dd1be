import * as path from 'node:path';
import type { TestCaseResult } from '../../shared/types';
import { readJunitCases, type JunitCase } from './junit-xml';
import { clipCaseMessage, type ParsedReport } from './report';

/** A JUnit case's outcome: its failure first, then its error, then a skip; none is a pass. */
export function junitCaseResult(name: string, testcase: JunitCase): TestCaseResult {
  const { outcomes } = testcase;
  // A test can fail and then also error in teardown; the failure is what the agent must fix first.
  const pick =
    outcomes.find((o) => o.kind === 'failure') ?? outcomes.find((o) => o.kind === 'error') ?? outcomes[0];
  if (!pick) return { name, status: 'passed' };
  const status = pick.kind === 'failure' ? 'failed' : pick.kind === 'error' ? 'error' : 'skipped';
  const detail = [pick.attrs.message, pick.text.trim()].filter((s) => s && s.length > 0).join('\n');
  return { name, status, ...(detail ? { message: clipCaseMessage(detail) } : {}) };
}

/**
 * A path the runner wrote as it saw it, relative to the workspace when it lies inside it (inside
 * the sandbox, `/workspace/…`): test ids must not depend on where a run happened to be.
 */
export function workspaceRelative(file: string, workspace: string): string {
  if (!path.posix.isAbsolute(file)) return file;
  const relative = path.posix.relative(workspace, file);
  return relative === '' || relative.startsWith('../') || relative === '..' ? file : relative;
}

/** The usual id, `<classname>::<name>`, with a file path as classname made workspace-relative. */
export function classnameId(testcase: JunitCase, workspace: string): string {
  const name = workspaceRelative(testcase.name, workspace);
  return testcase.classname ? `${workspaceRelative(testcase.classname, workspace)}::${name}` : name;
}

/** Reads a project runner's JUnit report into cases named by `id`. */
export function parseJunitReport(
  xml: string,
  workspace: string,
  id: (testcase: JunitCase, workspace: string) => string = classnameId,
): ParsedReport {
  return { cases: readJunitCases(xml).map((c) => junitCaseResult(id(c, workspace), c)) };
}
