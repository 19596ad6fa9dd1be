/**
 * SWE-bench-format instances over small generated repositories, one of each kind `--repos` takes:
 * a work tree (Python, pytest through `test_cmd` and through detection), a bare repository (a
 * test that outlives its time limit) and a bundle (TypeScript tested with Jest), and scripted
 * scenarios whose Coder writes an instance's gold patch through create_file.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Scenario } from '../../src/llm/scenario';
import { gitIn, writeFiles } from './repo-fixtures';

export interface FixtureInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  patch: string;
  test_patch: string;
  FAIL_TO_PASS: string;
  PASS_TO_PASS: string;
  test_cmd?: string;
  hints_text: string;
}

export interface EvalFixture {
  root: string;
  reposDir: string;
  instancesFile: string;
  instances: FixtureInstance[];
  /** Per instance, the files its gold patch changes as they are after it. */
  goldFiles: Map<string, Record<string, string>>;
  /** The work-tree repository, which aca must leave as it was. */
  workTree: string;
}

const PYTEST = '/usr/bin/python3 -m pytest -p no:cacheprovider';

interface Spec {
  id: string;
  problem: string;
  fix: Record<string, string>;
  tests: Record<string, string>;
  failToPass: string[];
  passToPass: string[];
  testCmd?: string;
}

/** The instance's patches, computed in a throwaway clone: the repository itself holds only the base. */
function instanceOf(
  repoDir: string,
  repo: string,
  spec: Spec,
  goldFiles: EvalFixture['goldFiles'],
): FixtureInstance {
  const base = gitIn(repoDir, 'rev-parse', 'HEAD').trim();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-eval-fix-'));
  try {
    gitIn(scratch, 'clone', '--quiet', repoDir, 'c');
    const clone = path.join(scratch, 'c');
    writeFiles(clone, { ...spec.fix, ...spec.tests });
    gitIn(clone, 'add', '-A');
    const diff = (files: string[]) => gitIn(clone, 'diff', '--cached', base, '--', ...files);
    goldFiles.set(spec.id, spec.fix);
    return {
      instance_id: spec.id,
      repo,
      base_commit: base,
      problem_statement: spec.problem,
      patch: diff(Object.keys(spec.fix)),
      test_patch: diff(Object.keys(spec.tests)),
      FAIL_TO_PASS: JSON.stringify(spec.failToPass),
      PASS_TO_PASS: JSON.stringify(spec.passToPass),
      ...(spec.testCmd ? { test_cmd: spec.testCmd } : {}),
      hints_text: '',
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function commitAll(dir: string, files: Record<string, string>): void {
  writeFiles(dir, files);
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '--quiet', '-m', 'base');
}

export function makeEvalFixture(): EvalFixture {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'aca-eval-fixture-')));
  const reposDir = path.join(root, 'repos');
  fs.mkdirSync(reposDir);
  const goldFiles: EvalFixture['goldFiles'] = new Map();
  const instances: FixtureInstance[] = [];

  // A work tree: acme/calc.
  const calc = path.join(reposDir, 'acme__calc');
  fs.mkdirSync(calc);
  gitIn(calc, 'init', '--quiet', '--initial-branch=main');
  commitAll(calc, {
    'calc.py':
      'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef neg(a):\n    return a\n',
    'tests/test_calc.py': 'from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
    'conftest.py': '',
  });
  const calcFixed =
    'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef neg(a):\n    return a\n';
  instances.push(
    instanceOf(
      calc,
      'acme/calc',
      {
        id: 'acme__calc-add',
        problem: 'add() subtracts: calc.add(2, 3) gives -1 where 5 is expected. Marker calc-add-task.',
        fix: { 'calc.py': calcFixed },
        tests: {
          'tests/test_calc.py':
            'from calc import add, mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n\ndef test_add_sums_unique_7f3a():\n    assert add(2, 3) == 5\n',
        },
        failToPass: ['tests/test_calc.py::test_add_sums_unique_7f3a'],
        passToPass: ['tests/test_calc.py::test_mul'],
        testCmd: `${PYTEST} tests/test_calc.py`,
      },
      goldFiles,
    ),
  );
  instances.push(
    instanceOf(
      calc,
      'acme/calc',
      {
        id: 'acme__calc-neg',
        problem: 'neg() returns its argument unchanged: calc.neg(4) gives 4, not -4. Marker calc-neg-task.',
        fix: {
          'calc.py':
            'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef neg(a):\n    return -a\n',
        },
        tests: {
          'tests/test_neg_b91c.py':
            'from calc import neg\n\n\ndef test_neg_negates_b91c():\n    assert neg(4) == -4\n',
        },
        failToPass: ['tests/test_neg_b91c.py::test_neg_negates_b91c'],
        passToPass: [],
      },
      goldFiles,
    ),
  );

  // A bare repository: acme/slow, whose new test outlives the 2 s its .aca.json allows.
  const slowWork = path.join(root, 'slow-work');
  fs.mkdirSync(slowWork);
  gitIn(slowWork, 'init', '--quiet', '--initial-branch=main');
  commitAll(slowWork, {
    '.aca.json': JSON.stringify({ limits: { wallTimeSeconds: 2 } }),
    'slow.py': 'def answer():\n    return 41\n',
  });
  instances.push(
    instanceOf(
      slowWork,
      'acme/slow',
      {
        id: 'acme__slow-answer',
        problem: 'answer() is off by one: it gives 41. Marker slow-answer-task.',
        fix: { 'slow.py': 'def answer():\n    return 42\n' },
        tests: {
          'test_slow.py':
            'import time\n\nfrom slow import answer\n\n\ndef test_answer_d2e4():\n    time.sleep(60)\n    assert answer() == 42\n',
        },
        failToPass: ['test_slow.py::test_answer_d2e4'],
        passToPass: [],
        testCmd: `${PYTEST} test_slow.py`,
      },
      goldFiles,
    ),
  );
  gitIn(root, 'clone', '--quiet', '--bare', slowWork, path.join(reposDir, 'acme__slow'));

  // A bundle: acme/tsutil, TypeScript tested with Jest (no test_cmd: the detected runner on the
  // test patch's files).
  const tsWork = path.join(root, 'ts-work');
  fs.mkdirSync(tsWork);
  gitIn(tsWork, 'init', '--quiet', '--initial-branch=main');
  commitAll(tsWork, {
    'src/sum.ts': 'export function sum(a: number, b: number): number {\n  return a - b;\n}\n',
    'test/other.test.ts':
      "import { sum } from '../src/sum';\n\ndescribe('sum', () => {\n  it('keeps zero', () => {\n    expect(sum(0, 0)).toBe(0);\n  });\n});\n",
  });
  instances.push(
    instanceOf(
      tsWork,
      'acme/tsutil',
      {
        id: 'acme__tsutil-sum',
        problem: 'sum() subtracts: sum(2, 3) gives -1. Marker tsutil-sum-task.',
        fix: { 'src/sum.ts': 'export function sum(a: number, b: number): number {\n  return a + b;\n}\n' },
        tests: {
          'test/sum.test.ts':
            "import { sum } from '../src/sum';\n\ndescribe('sum', () => {\n  it('adds two numbers c5d1', () => {\n    expect(sum(2, 3)).toBe(5);\n  });\n});\n",
        },
        failToPass: ['test/sum.test.ts::sum adds two numbers c5d1'],
        passToPass: [],
      },
      goldFiles,
    ),
  );
  gitIn(tsWork, 'bundle', 'create', '--quiet', path.join(reposDir, 'acme__tsutil.bundle'), '--all');

  const instancesFile = path.join(root, 'instances.jsonl');
  fs.writeFileSync(instancesFile, instances.map((i) => `${JSON.stringify(i)}\n`).join(''));
  return { root, reposDir, instancesFile, instances, goldFiles, workTree: calc };
}

/** A scenario whose Coder writes `files` (the instance's gold patch applied) through create_file. */
export function goldScenario(
  name: string,
  match: string,
  files: Record<string, string>,
  /** How long the Coder's first answer takes: runs stay in flight that long. */
  coderDelayMs = 0,
): Scenario {
  return {
    name,
    match,
    agents: {
      planner: [
        [
          {
            tool_calls: [
              {
                name: 'submit_plan',
                arguments: { summary: 'Fix the bug.', steps: ['Fix it'], files: Object.keys(files) },
              },
            ],
          },
        ],
      ],
      coder: [
        [
          ...Object.entries(files).map(([file, content], i) => ({
            ...(i === 0 && coderDelayMs > 0 ? { delayMs: coderDelayMs } : {}),
            tool_calls: [{ name: 'create_file', arguments: { path: file, content } }],
          })),
          { tool_calls: [{ name: 'finish', arguments: { summary: 'Fixed.' } }] },
        ],
      ],
      tester: [
        [{ tool_calls: [{ name: 'finish', arguments: { summary: 'The existing tests cover it.' } }] }],
      ],
      reflector: [
        [
          {
            tool_calls: [
              {
                name: 'submit_analysis',
                arguments: {
                  rootCause: 'unknown',
                  fixHypothesis: 'none',
                  filesToChange: [],
                  testsWrong: false,
                },
              },
            ],
          },
        ],
      ],
    },
  };
}
