/**
 * A batch's store, in its folder and in Postgres: the same instances paged by position among the
 * submitted ones, results saved once per instance whatever the retries, the report's rows in the
 * instances' order.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { evalDatabase, type EvalDatabase } from '../../../src/eval/batch-repository';
import {
  FolderBatchStore,
  instanceRow,
  type EvalBatchStore,
  type InstanceResult,
  type StoredInstance,
} from '../../../src/eval/batch-store';
import { openBatchStore } from '../../../src/eval/open-batch-store';
import { describePostgres, dropSchema, freshSchemaName } from '../../helpers/pg-test-env';

const COUNT = 1_203;

function stored(i: number): StoredInstance {
  const id = `o__r-${i}`;
  return {
    instance: {
      instance_id: id,
      repo: 'o/r',
      base_commit: 'a'.repeat(40),
      problem_statement: `issue ${i}`,
      patch: '',
      test_patch: '',
      FAIL_TO_PASS: ['t.py::test_a'],
      PASS_TO_PASS: [],
    },
    repoPath: '/copies/o__r',
    baseCommit: 'a'.repeat(40),
    language: 'python',
    prediction: null,
    spec: null,
  };
}

function result(id: string, status: InstanceResult['status']): InstanceResult {
  return {
    instance_id: id,
    status,
    reason: status === 'resolved' ? null : 'failing: t.py::test_a',
    model_name_or_path: 'm',
    model_patch: '',
    run: null,
    runState: null,
    runReason: null,
    iterations: 0,
    costUsd: 0,
    tokens: { prompt: 0, completion: 0 },
    tests: null,
    testCommand: null,
    testOutcome: null,
    outputTail: null,
    durationMs: 0,
  };
}

describe("an instance's row in report.json", () => {
  const ended = (status: InstanceResult['status'], runState: string | null, runReason: string | null) => ({
    ...result('o__r-1', status),
    runState,
    runReason,
  });

  test('carries the reason the run ended with, whether or not its patch resolved the instance', () => {
    expect(instanceRow(ended('resolved', 'FAILED', 'max_iterations'))).toMatchObject({
      state: 'FAILED',
      reason: 'max_iterations',
      resolved: true,
    });
    expect(instanceRow(ended('unresolved', 'FAILED', 'budget')).reason).toBe('budget');
  });

  test('a run that ended SUCCESS: null when resolved, else why the instance is not', () => {
    expect(instanceRow(ended('resolved', 'SUCCESS', null)).reason).toBeNull();
    expect(instanceRow(ended('unresolved', 'SUCCESS', null)).reason).toBe('failing: t.py::test_a');
  });

  test("an error instance keeps the error's own reason", () => {
    const error = {
      ...ended('error', 'FAILED', 'environment'),
      reason: 'the run ended FAILED (environment): …',
    };
    expect(instanceRow(error).reason).toBe('the run ended FAILED (environment): …');
  });
});

function storeContract(open: () => EvalBatchStore): void {
  test('pages the submitted instances by position, keeps one result each, reports in order', async () => {
    const store = open();
    const all = Array.from({ length: COUNT }, (_, i) => stored(i));
    // Every third instance is not submitted (given predictions lack it).
    const submitted = new Set(all.filter((_, i) => i % 3 !== 0).map((s) => s.instance.instance_id));
    await store.saveInstances(all, submitted);

    const paged: string[] = [];
    for (let from = 0; ; from += 100) {
      const page = await store.submittedIds(from, 100);
      paged.push(...page);
      if (page.length < 100) break;
    }
    expect(paged).toEqual([...submitted]);
    expect((await store.instance('o__r-5')).instance.problem_statement).toBe('issue 5');

    expect(await store.result('o__r-1')).toBeNull();
    await store.saveResult(result('o__r-1', 'unresolved'));
    // A retried step saves again: the last save is the one kept, never a second row.
    await store.saveResult(result('o__r-1', 'resolved'));
    await store.saveResult(result('o__r-2', 'error'));
    expect((await store.result('o__r-1'))?.status).toBe('resolved');

    const rows: { id: string; status: string | null }[] = [];
    for await (const row of store.reportRows()) rows.push({ id: row.id, status: row.result?.status ?? null });
    expect(rows.map((r) => r.id)).toEqual(all.map((s) => s.instance.instance_id));
    expect(rows.filter((r) => r.status !== null)).toEqual([
      { id: 'o__r-1', status: 'resolved' },
      { id: 'o__r-2', status: 'error' },
    ]);
  });
}

describe('a batch kept in its folder', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-batch-store-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  storeContract(() => new FolderBatchStore(dir));
});

describePostgres('a batch kept in Postgres', (url) => {
  let database: EvalDatabase;
  const batchId = `batch-${process.pid}`;
  const schema = freshSchemaName('eval');
  beforeAll(() => {
    database = evalDatabase(url, schema);
  });
  afterAll(async () => {
    await database.close();
    await dropSchema(url, schema);
  });
  storeContract(() => openBatchStore({ batchId, outDir: '/nowhere', store: 'database' }, database));

  test('a batch id already in the database is refused; a batch that could not start is discarded', async () => {
    const ref = { batchId: `${batchId}-again`, outDir: '/nowhere', store: 'database' as const };
    const store = openBatchStore(ref, database);
    await store.saveInstances([stored(1), stored(2)], new Set(['o__r-1', 'o__r-2']));
    await expect(store.saveInstances([stored(3)], new Set(['o__r-3']))).rejects.toThrow(
      /holds a batch .* already/,
    );
    expect(await store.submittedIds(0, 10)).toEqual(['o__r-1', 'o__r-2']);
    await store.discard();
    expect(await store.submittedIds(0, 10)).toEqual([]);
    await store.saveInstances([stored(3)], new Set(['o__r-3']));
    expect(await store.submittedIds(0, 10)).toEqual(['o__r-3']);
  });

  test('another batch does not see these instances, and a process without DATABASE_URL refuses', async () => {
    const other = openBatchStore(
      { batchId: `${batchId}-other`, outDir: '/nowhere', store: 'database' },
      database,
    );
    expect(await other.submittedIds(0, 10)).toEqual([]);
    expect(() => openBatchStore({ batchId, outDir: '/nowhere', store: 'database' }, undefined)).toThrow(
      /DATABASE_URL/,
    );
  });
});
