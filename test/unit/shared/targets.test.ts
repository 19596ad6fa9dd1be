import {
  caseOfTarget,
  describeTargets,
  judgeTargets,
  mergeTargets,
  targetFile,
  targetProblem,
  unknownTargets,
} from '../../../src/shared/targets';
import { submitPlanTool } from '../../../src/tools/finishing-tools';
import { parseToolArguments, toolDefinition } from '../../../src/tools/registry';

const c = (name: string, status: 'passed' | 'failed' | 'error' | 'skipped' = 'passed') => ({ name, status });

describe('which test cases a target names', () => {
  test.each([
    // pytest node ids: the test itself, its class, its file, its parametrizations
    ['tests/test_more.py::LastTests::test_basic', 'tests/test_more.py::LastTests::test_basic', true],
    ['tests/test_more.py::LastTests::test_basic', 'tests/test_more.py::LastTests', true],
    ['tests/test_more.py::LastTests::test_basic', 'tests/test_more.py', true],
    ['tests/test_more.py::LastTests::test_basic', 'tests/test_more.py::LastTests::test_basic_more', false],
    ['tests/test_more.py::LastTests::test_basic', 'tests/test_more.py::Last', false],
    ['tests/test_more.py::LastTests::test_basic', 'tests/test_mo', false],
    ['tests/test_more.py::LastTests::test_basic', 'tests', false],
    ['tests/test_more.py::LastTests::test_basic', 'tests/test_more.py::LastTests::test_basic[1]', false],
    ['tests/test_x.py::test_f[1-2]', 'tests/test_x.py::test_f', true],
    ['tests/test_x.py::test_f[1-2]', 'tests/test_x.py::test_f[1-2]', true],
    ['tests/test_x.py::test_f[1-2]', 'tests/test_x.py::test_f[1]', false],
    ['tests/test_x.py::test_fg', 'tests/test_x.py::test_f', false],
    // the same tests named the JUnit way, by a project's own command
    ['tests.test_more.LastTests::test_basic', 'tests/test_more.py::LastTests::test_basic', true],
    ['tests.test_more.LastTests::test_basic', 'tests/test_more.py::LastTests', true],
    ['tests.test_more.LastTests::test_basic', 'tests/test_more.py', true],
    ['tests.test_more.LastTests::test_basic', 'tests/test_other.py', false],
    ['tests.test_x::test_f[a.b]', 'tests/test_x.py::test_f', true],
    ['test_x::test_f', 'test_x.py::test_f', true],
    // Jest: <file>::<full name>, and the file for all its tests
    ['src/a.test.ts::outer inner adds', 'src/a.test.ts::outer inner adds', true],
    ['src/a.test.ts::outer inner adds', 'src/a.test.ts', true],
    ['src/a.test.ts::outer inner adds', 'src/a.test.ts::outer inner add', false],
    ['src/a.test.ts::outer inner adds', 'src/a.test', false],
    ['src/a.test.ts', 'src/a.test.ts', true],
    // A Jest id is never read the dotted way.
    ['src.a::adds', 'src/a.test.ts::adds', false],
  ])('%s is of target %s: %s', (name, target, expected) => {
    expect(caseOfTarget(name, target)).toBe(expected);
  });
});

describe('a target outcome in a test run', () => {
  const cases = [
    c('tests/test_more.py::LastTests::test_basic', 'failed'),
    c('tests/test_more.py::LastTests::test_empty'),
    c('tests/test_more.py::FirstTests::test_basic'),
    c('tests/test_x.py::test_f[1]'),
    c('tests/test_x.py::test_f[2]', 'error'),
    c('tests/test_x.py::test_g'),
    c('tests/test_x.py::test_s', 'skipped'),
  ];

  test('failed over error over passed; missing when nothing of it ran', () => {
    expect(
      judgeTargets(
        [
          'tests/test_more.py::LastTests::test_basic',
          'tests/test_more.py::LastTests',
          'tests/test_more.py::FirstTests',
          'tests/test_x.py::test_f',
          'tests/test_x.py::test_f[1]',
          'tests/test_x.py',
          'tests/test_x.py::test_s',
          'tests/test_nope.py',
        ],
        cases,
        true,
      ),
    ).toEqual([
      { id: 'tests/test_more.py::LastTests::test_basic', outcome: 'failed' },
      { id: 'tests/test_more.py::LastTests', outcome: 'failed' },
      { id: 'tests/test_more.py::FirstTests', outcome: 'passed' },
      { id: 'tests/test_x.py::test_f', outcome: 'error' },
      { id: 'tests/test_x.py::test_f[1]', outcome: 'passed' },
      { id: 'tests/test_x.py', outcome: 'error' },
      { id: 'tests/test_x.py::test_s', outcome: 'missing' },
      { id: 'tests/test_nope.py', outcome: 'missing' },
    ]);
  });

  test('a target needs every case it had at the baseline: dropping the failing parameters does not pass it', () => {
    const baseline = [
      { name: 'tests/test_a.py::test_p[1]', status: 'passed' as const },
      { name: 'tests/test_a.py::test_p[2]', status: 'failed' as const },
    ];
    const now = [{ name: 'tests/test_a.py::test_p[1]', status: 'passed' as const }];
    expect(judgeTargets(['tests/test_a.py::test_p'], now, true, baseline)).toEqual([
      { id: 'tests/test_a.py::test_p', outcome: 'missing' },
    ]);
    expect(judgeTargets(['tests/test_a.py::test_p'], now, true)).toEqual([
      { id: 'tests/test_a.py::test_p', outcome: 'passed' },
    ]);
    const all = [...now, { name: 'tests/test_a.py::test_p[2]', status: 'passed' as const }];
    expect(judgeTargets(['tests/test_a.py::test_p'], all, true, baseline)).toEqual([
      { id: 'tests/test_a.py::test_p', outcome: 'passed' },
    ]);
  });

  test('in a run that did not complete, a target with no case is an error', () => {
    expect(judgeTargets(['tests/test_nope.py'], [], false)).toEqual([
      { id: 'tests/test_nope.py', outcome: 'error' },
    ]);
  });

  test('unknown targets: not even a skipped case of theirs ran', () => {
    expect(
      unknownTargets(['tests/test_x.py::test_s', 'tests/test_x.py::test_h', 'tests/test_more.py'], cases),
    ).toEqual(['tests/test_x.py::test_h']);
  });

  test('described in one line', () => {
    expect(
      describeTargets([
        { id: 'a.py::t', outcome: 'failed' },
        { id: 'b.py', outcome: 'passed' },
      ]),
    ).toBe('a.py::t failed, b.py passed');
  });
});

describe('targets as written', () => {
  test('the file is the part before the first ::', () => {
    expect(targetFile('tests/t.py::A::b[x::y]')).toBe('tests/t.py');
    expect(targetFile('tests/t.py')).toBe('tests/t.py');
  });

  test.each([
    ['', 'is empty'],
    [' tests/t.py', 'has spaces around it'],
    ['/etc/passwd', 'must start with a path relative to the repository'],
    ['--help', 'must start with a path relative to the repository'],
    ['::test_x', 'names no file before "::"'],
    ['tests/../t.py', 'must name a file inside the repository (no "..", "." or empty path parts)'],
    ['tests//t.py', 'must name a file inside the repository (no "..", "." or empty path parts)'],
    ['t.py::a\nb', 'contains a control character'],
  ])('%j %s', (id, problem) => {
    expect(targetProblem(id)).toBe(problem);
  });

  test('a target longer than any test id is refused', () => {
    expect(targetProblem('x'.repeat(1001))).toBe('is longer than 1000 characters');
  });

  test('ids as pytest and Jest write them are fine', () => {
    expect(targetProblem('tests/test_x.py::TestY::test_z[a b-1.5]')).toBeNull();
    expect(targetProblem('src/a.test.ts::outer inner adds one')).toBeNull();
  });

  test('merged from several sources, each once, in order', () => {
    expect(mergeTargets(['a', 'b'], undefined, ['b', 'c'], ['a'])).toEqual(['a', 'b', 'c']);
  });
});

describe("the Planner's targets in submit_plan", () => {
  test('an optional list of strings in the schema the model is offered', () => {
    const parameters = toolDefinition('submit_plan').function.parameters as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(parameters.properties.targets).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(parameters.required).toEqual(['summary', 'steps', 'files']);
  });

  test('kept in the plan when given, absent when not', () => {
    const args = { summary: 's', steps: ['a'], files: [] };
    expect(submitPlanTool.finish({ ...args, targets: ['tests/t.py::x'] })).toEqual({
      tool: 'submit_plan',
      plan: { ...args, targets: ['tests/t.py::x'] },
    });
    expect(submitPlanTool.finish(args)).toEqual({ tool: 'submit_plan', plan: args });
    expect(submitPlanTool.finish({ ...args, targets: [] })).toEqual({ tool: 'submit_plan', plan: args });
    expect(
      parseToolArguments('submit_plan', '{"summary":"s","steps":[],"files":[],"targets":"t.py"}').ok,
    ).toBe(false);
  });
});
