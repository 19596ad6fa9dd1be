/**
 * The repository contract, run twice: on embedded PGlite and on a real Postgres server. The same
 * SQL must behave the same on both, so every test here runs on both.
 */
import * as fs from 'node:fs';
import type { FailureMemory } from '../../../src/memory/failure-repository';
import { PgFailureRepository } from '../../../src/memory/failure-repository';
import { MIGRATIONS } from '../../../src/memory/migrations';
import { MemoryError } from '../../../src/memory/memory-errors';
import { openFailureMemory } from '../../../src/memory/open-memory';
import {
  describePostgres,
  dropSchema,
  freshSchemaName,
  preparePostgres,
  tempDir,
  uniqueId,
} from '../../helpers/pg-test-env';
import { CURRENT_TASK, seedFailures, type SeededRuns } from '../../helpers/seed-failures';

const ALL_VERSIONS = MIGRATIONS.map((m) => m.version);

function repositorySuite(open: () => Promise<FailureMemory>, cleanup: () => Promise<void>): void {
  let memory: PgFailureRepository;
  let firstApplied: readonly number[];
  let runs: SeededRuns;

  beforeAll(async () => {
    memory = (await open()) as PgFailureRepository;
    expect(memory).toBeInstanceOf(PgFailureRepository);
    firstApplied = memory.migrationsApplied;
    runs = await seedFailures(memory);
  });

  afterAll(async () => {
    await memory?.close();
    await cleanup();
  });

  test('opening a fresh database applies every migration; reopening applies none', async () => {
    expect(firstApplied).toEqual(ALL_VERSIONS);
    await memory.close();
    memory = (await open()) as PgFailureRepository;
    expect(memory.migrationsApplied).toEqual([]);
    expect(await memory.schemaVersions()).toEqual(ALL_VERSIONS);
  });

  test('every write can be repeated without duplicating a row (retried activities)', async () => {
    const id = uniqueId('retry');
    const twice = async (write: () => Promise<unknown>) => {
      await write();
      await write();
    };
    await twice(() =>
      memory.createTask({ workflowId: id, task: 'Reverse a linked list in place', language: 'python' }),
    );
    await twice(() =>
      memory.logIteration({ workflowId: id, iteration: 1, passRate: 0.25, passed: 1, failed: 3 }),
    );
    let attempt = 0;
    await twice(() =>
      memory.storeFailure({
        workflowId: id,
        iteration: 1,
        testOutput: 'AssertionError: list not reversed',
        rootCause: `head pointer never updated (attempt ${++attempt})`,
        fixHypothesis: 'return prev instead of head',
        filesToChange: ['linked_list.py'],
      }),
    );
    await twice(() =>
      memory.recordFix({ workflowId: id, iteration: 2, summary: 'return prev at the end of the loop' }),
    );
    await twice(() => memory.updateTaskStatus(id, 'success'));

    expect(await memory.rowCounts(id)).toEqual({ tasks: 1, iterations: 1, failures: 1, fixes: 1 });
    // The last attempt's content wins: it is the one whose result the workflow saw.
    const [stored] = (await memory.search('Reverse a linked list in place', 10)).filter(
      (r) => r.workflowId === id,
    );
    expect(stored).toMatchObject({
      rootCause: 'head pointer never updated (attempt 2)',
      status: 'success',
      fix: 'return prev at the end of the loop',
    });

    // A second kind in the same iteration is a different row, not a conflict.
    await twice(() =>
      memory.storeFailure({
        workflowId: id,
        iteration: 1,
        kind: 'error',
        testOutput: 'timeout',
        rootCause: 'slow',
        fixHypothesis: 'faster',
        filesToChange: [],
      }),
    );
    expect((await memory.rowCounts(id)).failures).toBe(2);
  });

  test("recordFix reports how many of the run's failures it explains", async () => {
    expect(
      await memory.recordFix({
        workflowId: runs.csv,
        iteration: 3,
        summary:
          'Replaced str.split with a character state machine that tracks in_quotes and turns doubled quotes into one',
      }),
    ).toBe(2);
  });

  test('a related past task ranks above unrelated ones, with what fixed it', async () => {
    const lessons = await memory.findSimilarFailures(CURRENT_TASK, {
      excludeWorkflowId: runs.current,
      limit: 3,
    });
    expect(lessons.length).toBeGreaterThan(0);
    expect(lessons[0]!.task).toContain('parse_csv');
    expect(lessons[0]!.fix).toContain('state machine');
    for (const other of lessons.slice(1)) expect(other.similarity).toBeLessThan(lessons[0]!.similarity);
    // One lesson per past run, so the CSV run's two failures do not fill two slots.
    expect(lessons.filter((l) => l.task.includes('parse_csv'))).toHaveLength(1);
    // The asking run's own failure is not a lesson from the past.
    expect(lessons.some((l) => l.rootCause.includes('CURRENT RUN'))).toBe(false);
  });

  test('without exclusion the current run is found too (exclusion is what hides it)', async () => {
    const lessons = await memory.findSimilarFailures(CURRENT_TASK, { limit: 5 });
    expect(lessons.some((l) => l.rootCause.includes('CURRENT RUN'))).toBe(true);
  });

  test('the same question asked at once by two runs: each gets its own top lessons, without its own run', async () => {
    const [forCurrent, forCsv, alone] = await Promise.all([
      memory.findSimilarFailures(CURRENT_TASK, { excludeWorkflowId: runs.current, limit: 2 }),
      memory.findSimilarFailures(CURRENT_TASK, { excludeWorkflowId: runs.csv, limit: 2 }),
      memory.findSimilarFailures(CURRENT_TASK, { limit: 2 }),
    ]);
    expect(forCurrent.length).toBeGreaterThan(0);
    expect(forCurrent.some((l) => l.rootCause.includes('CURRENT RUN'))).toBe(false);
    expect(forCurrent[0]!.task).toContain('parse_csv');
    expect(forCsv.length).toBeGreaterThan(0);
    expect(forCsv.some((l) => l.task.includes('parse_csv'))).toBe(false);
    expect(forCsv.some((l) => l.rootCause.includes('CURRENT RUN'))).toBe(true);
    // Asked alone, each answer is the same.
    expect(
      await memory.findSimilarFailures(CURRENT_TASK, { excludeWorkflowId: runs.current, limit: 2 }),
    ).toEqual(forCurrent);
    expect(await memory.findSimilarFailures(CURRENT_TASK, { excludeWorkflowId: runs.csv, limit: 2 })).toEqual(
      forCsv,
    );
    // Without exclusion the run itself and the CSV run lead.
    expect(alone.map((l) => l.rootCause.includes('CURRENT RUN') || l.task.includes('parse_csv'))).toEqual([
      true,
      true,
    ]);
  });

  test('the error text finds the past run that failed the same way', async () => {
    const lessons = await memory.findSimilarFailures('Make the failing tests pass', {
      errorText: 'RecursionError: maximum recursion depth exceeded',
      limit: 3,
    });
    expect(lessons[0]?.task).toContain('Fibonacci');
    expect(lessons[0]?.fix).toBeNull();
  });

  test('lessons are bounded in size and count', async () => {
    const long = 'x'.repeat(50_000);
    const id = uniqueId('long');
    await memory.createTask({ workflowId: id, task: `${CURRENT_TASK} ${long}`, language: 'python' });
    await memory.storeFailure({
      workflowId: id,
      iteration: 1,
      testOutput: long,
      rootCause: long,
      fixHypothesis: long,
      filesToChange: [long],
    });
    await memory.recordFix({ workflowId: id, iteration: 2, summary: long });
    const lessons = await memory.findSimilarFailures(CURRENT_TASK, { limit: 2, maxChars: 200, minScore: 0 });
    expect(lessons.length).toBeLessThanOrEqual(2);
    for (const l of lessons) {
      expect(
        l.task.length + l.rootCause.length + l.fixHypothesis.length + (l.fix?.length ?? 0),
      ).toBeLessThanOrEqual(200);
    }
  });

  test('search ranks stored failures for the CLI', async () => {
    const results = await memory.search('quoted fields split on commas', 5);
    expect(results[0]?.workflowId).toMatch(/^(csv|current)-/);
    expect(results.map((r) => r.score)).toEqual([...results.map((r) => r.score)].sort((a, b) => b - a));
    expect(results[0]).toEqual(
      expect.objectContaining({
        iteration: expect.any(Number),
        language: 'python',
        filesToChange: expect.any(Array),
        createdAt: expect.any(String),
      }),
    );
  });

  test('SQL refusals are permanent errors, not retryable ones', async () => {
    const unknownTask = memory.updateTaskStatus(uniqueId('missing'), 'failed', 'error');
    await expect(unknownTask).rejects.toBeInstanceOf(MemoryError);
    await expect(unknownTask).rejects.toMatchObject({ retryable: false });
    // Foreign key: failures belong to a task.
    await expect(
      memory.storeFailure({
        workflowId: uniqueId('orphan'),
        iteration: 1,
        testOutput: '',
        rootCause: '',
        fixHypothesis: '',
        filesToChange: [],
      }),
    ).rejects.toMatchObject({ retryable: false, code: '23503', name: 'MemoryQueryError' });
  });
}

describe('failure memory on embedded PGlite', () => {
  const dir = tempDir('repo');
  repositorySuite(
    () => openFailureMemory({ dataDir: dir }),
    async () => fs.rmSync(dir, { recursive: true, force: true }),
  );
});

describePostgres('failure memory on Postgres', (url) => {
  const schema = freshSchemaName('repo');
  repositorySuite(
    async () => {
      await preparePostgres(url);
      return openFailureMemory({ databaseUrl: url, schema });
    },
    () => dropSchema(url, schema),
  );
});

describePostgres('migrations on Postgres', (url) => {
  test('workers opening a fresh database at once all succeed, and each migration is applied exactly once', async () => {
    await preparePostgres(url);
    const schema = freshSchemaName('race');
    const opened = await Promise.all([1, 2, 3].map(() => openFailureMemory({ databaseUrl: url, schema })));
    try {
      const applied = opened.map((m) => (m as PgFailureRepository).migrationsApplied).flat();
      expect([...applied].sort((a, b) => a - b)).toEqual(ALL_VERSIONS);
      expect(await (opened[0] as PgFailureRepository).schemaVersions()).toEqual(ALL_VERSIONS);
    } finally {
      await Promise.all(opened.map((m) => m.close()));
      await dropSchema(url, schema);
    }
  });
});
