import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { patchFiles, readInstances, selectInstances } from '../../../src/eval/instances';
import { readPredictions } from '../../../src/eval/predictions';
import { judgeIds, pytestNodeId } from '../../../src/eval/test-ids';
import {
  buildEvalReport,
  countOutcome,
  NO_COUNTS,
  type EvalBatchInput,
  type EvalCarried,
  type InstanceOutcome,
} from '../../../src/shared/eval-types';
import { UserInputError } from '../../../src/shared/errors';
import { DEFAULT_RUN_OPTIONS } from '../../../src/shared/run-types';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-eval-units-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const instance = (more: Record<string, unknown> = {}) => ({
  instance_id: 'o__n-1',
  repo: 'o/n',
  base_commit: 'abcdef1',
  problem_statement: 'broken',
  patch: '',
  test_patch: '',
  FAIL_TO_PASS: '["a.py::t"]',
  PASS_TO_PASS: ['a.py::u'],
  version: '1.0',
  ...more,
});

function write(name: string, lines: unknown[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n'));
  return file;
}

describe('instances', () => {
  test('test lists as lists or JSON-encoded strings; other fields kept; blank lines skipped', () => {
    const [read] = readInstances(write('ok.jsonl', [instance(), '']));
    expect(read!.FAIL_TO_PASS).toEqual(['a.py::t']);
    expect(read!.PASS_TO_PASS).toEqual(['a.py::u']);
    expect(read!.version).toBe('1.0');
  });

  test.each([
    ['not JSON', '{', /line 1 is not JSON/],
    ['a missing field', instance({ patch: undefined }), /line 1 is not an instance: patch/],
    ['a test list that is neither', instance({ FAIL_TO_PASS: 'x' }), /FAIL_TO_PASS is neither/],
    ['a repo that is not owner/name', instance({ repo: '../x' }), /repo is not owner\/name/],
    ['an id with a path in it', instance({ instance_id: '../x' }), /instance_id/],
  ])('%s is bad input', (_name, line, message) => {
    expect(() => readInstances(write('bad.jsonl', [line]))).toThrow(message);
    expect(() => readInstances(write('bad.jsonl', [line]))).toThrow(UserInputError);
  });

  test('an id twice, an unknown --only id and an unreadable file are bad input', () => {
    expect(() => readInstances(write('twice.jsonl', [instance(), instance()]))).toThrow(/appears twice/);
    const all = readInstances(write('two.jsonl', [instance(), instance({ instance_id: 'o__n-2' })]));
    expect(selectInstances(all, ['o__n-2'], undefined).map((i) => i.instance_id)).toEqual(['o__n-2']);
    expect(selectInstances(all, undefined, 1).map((i) => i.instance_id)).toEqual(['o__n-1']);
    expect(() => selectInstances(all, ['nope'], undefined)).toThrow(/unknown instances: nope/);
    expect(() => readInstances(path.join(dir, 'missing.jsonl'))).toThrow(/cannot read/);
  });

  test('patchFiles names both sides of each diff header and not a removed line that looks like one', () => {
    const patch = [
      'diff --git a/x.py b/x.py',
      '--- a/x.py',
      '+++ b/x.py',
      '@@ -1 +1 @@',
      '--- a/not-a-file.py',
      'diff --git a/old.py b/new.py',
    ].join('\n');
    expect(patchFiles(patch)).toEqual(['new.py', 'old.py', 'x.py']);
  });
});

describe('predictions', () => {
  test('JSON lines or a JSON list; a null patch is empty', () => {
    const lines = readPredictions(
      write('p.jsonl', [{ instance_id: 'a', model_patch: 'd', model_name_or_path: 'm' }]),
    );
    expect(lines.get('a')).toEqual({ model_name_or_path: 'm', model_patch: 'd' });
    const list = path.join(dir, 'p.json');
    fs.writeFileSync(list, JSON.stringify([{ instance_id: 'b', model_patch: null }]));
    expect(readPredictions(list).get('b')).toEqual({ model_name_or_path: 'predictions', model_patch: '' });
    expect(() => readPredictions(write('bad-p.jsonl', [{ model_patch: 'x' }]))).toThrow(
      /not a prediction: instance_id/,
    );
  });
});

describe('test ids', () => {
  test('a pytest JUnit case becomes the node id through the files of the tree', () => {
    fs.mkdirSync(path.join(dir, 'tree', 'pkg', 'tests'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'tree', 'pkg', 'tests', 'test_x.py'), '');
    fs.writeFileSync(path.join(dir, 'tree', 'tests.py'), '');
    const tree = path.join(dir, 'tree');
    expect(pytestNodeId('pkg.tests.test_x::test_a[1-2]', tree)).toBe('pkg/tests/test_x.py::test_a[1-2]');
    expect(pytestNodeId('pkg.tests.test_x.TestY.Inner::test_b', tree)).toBe(
      'pkg/tests/test_x.py::TestY::Inner::test_b',
    );
    expect(pytestNodeId('tests.SignerTestCase::test_sign', tree)).toBe('tests.py::SignerTestCase::test_sign');
    // Not a file of the tree, or no classname: kept as reported.
    expect(pytestNodeId('nowhere.mod::t', tree)).toBe('nowhere.mod::t');
    expect(pytestNodeId('command::make test', tree)).toBe('command::make test');
  });

  test('an id passes only when reported passed; missing or reported twice with a failure fails', () => {
    const verdict = judgeIds(
      ['a', 'b', 'c', 'd'],
      [
        { name: 'a', status: 'passed' },
        { name: 'b', status: 'passed' },
        { name: 'b', status: 'error' },
        { name: 'c', status: 'skipped' },
      ],
    );
    expect(verdict).toEqual({ success: ['a'], failure: ['b', 'c', 'd'] });
  });
});

describe('the report', () => {
  test("SWE-bench's counts and lists, in the instances' order; those never run are not submitted", () => {
    const o = (id: string, status: InstanceOutcome['status'], costUsd = 0.5): InstanceOutcome => ({
      id,
      status,
      reason: null,
      costUsd,
      tokens: { prompt: 10, completion: 1 },
    });
    const report = buildEvalReport(
      ['r1', 'u1', 'e1', 'x1', 'err1', 'never'],
      [
        o('err1', 'error'),
        o('u1', 'unresolved'),
        o('r1', 'resolved'),
        o('e1', 'empty_patch'),
        o('x1', 'resolved'),
      ],
    );
    expect(report).toEqual({
      total_instances: 6,
      submitted_instances: 5,
      completed_instances: 3,
      resolved_instances: 2,
      unresolved_instances: 1,
      empty_patch_instances: 1,
      error_instances: 1,
      submitted_ids: ['r1', 'u1', 'e1', 'x1', 'err1'],
      completed_ids: ['r1', 'u1', 'x1'],
      resolved_ids: ['r1', 'x1'],
      unresolved_ids: ['u1'],
      empty_patch_ids: ['e1'],
      error_ids: ['err1'],
      cost_usd: 2.5,
      tokens: { prompt: 50, completion: 5 },
    });
  });
});

describe('what a batch carries from one execution to the next', () => {
  test('its size does not grow with the number of instances (50,000, SWE-smith’s size)', () => {
    const carried = (instances: number): EvalCarried => {
      let counts = NO_COUNTS;
      for (let i = 0; i < instances; i += 1) {
        counts = countOutcome(counts, {
          id: `owner__repository.0123abcd.combine_file__${i.toString(36).padStart(8, '0')}`,
          status: (['resolved', 'unresolved', 'empty_patch', 'error'] as const)[i % 4]!,
          reason: i % 4 === 0 ? null : 'failing: tests/test_x.py::TestY::test_z and 3 more',
          costUsd: 0.0123,
          tokens: { prompt: 12_345, completion: 678 },
        });
      }
      return {
        next: instances,
        counts,
        paused: false,
        stopped: null,
        executions: Math.ceil(instances / 100),
      };
    };
    const small = JSON.stringify(carried(100)).length;
    const large = carried(50_000);
    expect(large.counts).toMatchObject({
      done: 50_000,
      resolved: 12_500,
      errors: 12_500,
      emptyPatch: 12_500,
    });
    // Only the digits of the counts grow: a few bytes, where each outcome carried was ~430.
    expect(JSON.stringify(large).length).toBeLessThan(small + 64);
    expect(JSON.stringify(large).length).toBeLessThan(512);
  });
});

describe("a batch's input", () => {
  test('its size does not grow with the number of instances: they are paged from the store', () => {
    const input = (instances: number): EvalBatchInput => ({
      batchId: 'eval-2026-11-28-abcdef',
      outDir: '/home/aca/.aca/evals/eval-2026-11-28-abcdef',
      store: 'database',
      submitted: instances,
      total: instances,
      source: 'agent',
      modelName: 'gpt-4o-mini',
      concurrency: 8,
      maxCostUsd: 500,
      run: {
        model: 'gpt-4o-mini',
        options: DEFAULT_RUN_OPTIONS,
      },
    });
    const small = JSON.stringify(input(100)).length;
    const large = JSON.stringify(input(50_000)).length;
    // Only the digits of two counts differ.
    expect(large - small).toBeLessThanOrEqual(6);
    expect(large).toBeLessThan(2_048);
  });
});
