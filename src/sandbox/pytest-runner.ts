import * as path from 'node:path';
import { z } from 'zod';
import type { TestCaseResult } from '../shared/types';
import { clipHead, type ParsedReport } from './report';
import { baseEnv, type TestRunner } from './runner';
import { parseXml, type XmlElement } from './xml';

/** Debian's interpreter, not whatever python is first on the worker's PATH (pyenv shims live in /root). */
export const PYTHON = '/usr/bin/python3';

/** pytest's exit codes that mean "the run itself broke" rather than "tests failed". */
const PYTEST_INTERRUPTED = 2;
const PYTEST_INTERNAL_ERROR = 3;
const PYTEST_USAGE_ERROR = 4;

export const pytestRunner: TestRunner = {
  needsNode: false,
  addressSpaceHeadroomBytes: 0,
  reportExtension: 'xml',
  command({ paths, testPaths, reportName }) {
    const argv = [
      PYTHON,
      '-m',
      'pytest',
      '-q',
      '--color=no',
      // The cache would be written into the workspace and change the next run's order.
      '-p',
      'no:cacheprovider',
      '-o',
      'junit_family=xunit2',
      `--junitxml=${path.posix.join(paths.workspace, reportName)}`,
      `--rootdir=${paths.workspace}`,
      ...testPaths,
    ];
    return {
      argv,
      env: {
        ...baseEnv(paths),
        // Unbuffered, so the tail we keep is current when a run is killed.
        PYTHONUNBUFFERED: '1',
        // No __pycache__ left in the workspace; both modes pay the same compile cost.
        PYTHONDONTWRITEBYTECODE: '1',
      },
    };
  },
  parse(reportText, { exitCode }) {
    return parseJunit(reportText, exitCode);
  },
};

const Attr = z.record(z.string(), z.string());
const TestCase = z.object({
  name: z.literal('testcase'),
  attrs: Attr.and(z.object({ name: z.string(), classname: z.string().optional() })),
});
const Outcome = z.object({ name: z.enum(['failure', 'error', 'skipped']), attrs: Attr, text: z.string() });

export function parseJunit(xml: string, exitCode: number | null): ParsedReport {
  const root = parseXml(xml);
  const suites = root.name === 'testsuites' ? root.children.filter((c) => c.name === 'testsuite') : [root];
  if (suites.some((s) => s.name !== 'testsuite')) throw new Error(`unexpected JUnit root <${root.name}>`);
  const cases: TestCaseResult[] = [];
  const collectionErrors: string[] = [];
  for (const suite of suites) {
    for (const element of suite.children.filter((c) => c.name === 'testcase')) {
      const testcase = TestCase.parse(element);
      const { name, classname } = testcase.attrs;
      const fullName = classname ? `${classname}::${name}` : name;
      const result = caseResult(fullName, element);
      // pytest marks import/syntax errors with this fixed message attribute.
      const collection = element.children.find(
        (c) => c.name === 'error' && c.attrs.message === 'collection failure',
      );
      if (collection) collectionErrors.push(`${name}: ${lastLines(collection.text, 6)}`);
      cases.push(result);
    }
  }
  const brokenRun =
    exitCode === PYTEST_INTERRUPTED || exitCode === PYTEST_INTERNAL_ERROR || exitCode === PYTEST_USAGE_ERROR;
  if (collectionErrors.length === 0 && brokenRun) {
    collectionErrors.push(`pytest exited with code ${exitCode} (interrupted, internal or usage error)`);
  }
  return {
    cases,
    ...(collectionErrors.length > 0
      ? { collectionError: `collection error: ${collectionErrors.join('; ')}` }
      : {}),
  };
}

function caseResult(name: string, element: XmlElement): TestCaseResult {
  const outcomes = element.children
    .filter((c) => c.name === 'failure' || c.name === 'error' || c.name === 'skipped')
    .map((c) => Outcome.parse(c));
  // A test can fail and then also error in teardown; the failure is what the agent must fix first.
  const pick =
    outcomes.find((o) => o.name === 'failure') ?? outcomes.find((o) => o.name === 'error') ?? outcomes[0];
  if (!pick) return { name, status: 'passed' };
  const status = pick.name === 'failure' ? 'failed' : pick.name === 'error' ? 'error' : 'skipped';
  const detail = [pick.attrs.message, pick.text.trim()].filter((s) => s && s.length > 0).join('\n');
  return { name, status, ...(detail ? { message: clipHead(detail) } : {}) };
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join('\n');
}
