/**
 * Failure memory hands the Planner one lesson per past run: the failure of that run that best
 * matches the asking task. A past run here has two stored failures; which one reaches the
 * Planner's first message, and why (its score against the task, then the later iteration on a
 * tie), on embedded PGlite and on Postgres.
 */
import * as fs from 'node:fs';
import { createLessonRecall } from '../../../src/activities/memory-activities';
import { buildUserMessage } from '../../../src/agents/user-message';
import type { FailureMemory, FailureRecord } from '../../../src/memory/failure-repository';
import { openFailureMemory } from '../../../src/memory/open-memory';
import {
  describePostgres,
  dropSchema,
  freshSchemaName,
  preparePostgres,
  tempDir,
  uniqueId,
} from '../../helpers/pg-test-env';

const PAST_TASK =
  'Implement parse_csv(text) in csv_parser.py that splits CSV lines into fields, honouring double-quoted fields that contain commas';

/** Shares words with a task about quoted CSV fields. */
const QUOTING: Omit<FailureRecord, 'workflowId' | 'iteration'> = {
  testOutput: `FAILED test_csv.py::test_quoted_comma - AssertionError: assert ['a', '"b', 'c"'] == ['a', 'b,c']`,
  rootCause: 'Quoted fields that contain commas are split apart: every comma ends a field, quotes or not',
  fixHypothesis: 'Track whether the scan is inside quotes and split only on commas outside them',
  filesToChange: ['csv_parser.py'],
};

/** Shares words with a task about a missing helper module, none with one about quoting. */
const MISSING_HELPER: Omit<FailureRecord, 'workflowId' | 'iteration'> = {
  testOutput: "E   ModuleNotFoundError: No module named 'helpers'",
  rootCause: 'The test module imports a helper module that is missing from the import path',
  fixHypothesis: 'Add the missing helper module to the package so the import finds it',
  filesToChange: ['tests/helpers.py'],
};

const QUOTING_TASK = 'Write a CSV parser that handles quoted fields containing commas';
const HELPER_TASK =
  'Make the csv_parser tests pass: they import a helper module missing from the import path';

function bestFailureSuite(open: () => Promise<FailureMemory>, cleanup: () => Promise<void>): void {
  let memory: FailureMemory;
  const asking = uniqueId('asking');

  /** What the Planner's first message says of past failures, through the worker's own recall. */
  async function plannerSees(task: string): Promise<string> {
    const recall = createLessonRecall({ memory: async () => memory });
    const lessons = await recall({ workflowId: asking, task });
    return buildUserMessage(
      {
        role: 'planner',
        task,
        language: 'python',
        attempt: 1,
        maxIterations: 3,
        protectedPaths: [],
        lessons,
      },
      null,
    );
  }

  /** A past run on PAST_TASK with the given failures, stored in the order given. */
  async function pastRun(
    failures: [number, Omit<FailureRecord, 'workflowId' | 'iteration'>][],
  ): Promise<string> {
    const workflowId = uniqueId('past');
    await memory.createTask({ workflowId, task: PAST_TASK, language: 'python' });
    for (const [iteration, failure] of failures)
      await memory.storeFailure({ workflowId, iteration, ...failure });
    await memory.updateTaskStatus(workflowId, 'failed', 'max_iterations');
    return workflowId;
  }

  /** Each stored failure of one run with its score against `task`, as the lessons rank them. */
  async function scores(workflowId: string, task: string): Promise<Map<string, number>> {
    const rows = (await memory.search(task, 200)).filter((r) => r.workflowId === workflowId);
    return new Map(rows.map((r) => [r.rootCause, r.score]));
  }

  beforeAll(async () => {
    memory = await open();
  });

  afterAll(async () => {
    await memory?.close();
    await cleanup();
  });

  describe('a past run with two failures, each matching a different task', () => {
    let past: string;
    beforeAll(async () => {
      // The quoting failure first and earlier: neither recency nor storing order picks it below.
      past = await pastRun([
        [1, QUOTING],
        [2, MISSING_HELPER],
      ]);
    });

    test.each([
      ['quoted fields', QUOTING_TASK, QUOTING, MISSING_HELPER],
      ['a missing helper module', HELPER_TASK, MISSING_HELPER, QUOTING],
    ])(
      'asked about %s, the Planner is handed the failure that matches it, and only that one',
      async (_about, task, picked, other) => {
        const message = await plannerSees(task);
        expect(message).toContain('Lessons from similar past failures');
        expect(message).toContain(`What went wrong: ${picked.rootCause}`);
        expect(message).toContain(`What was tried next: ${picked.fixHypothesis}`);
        expect(message).not.toContain(other.rootCause);
        expect(message).not.toContain(other.fixHypothesis);

        // Why: its words match the task's, so it scores above the run's other failure, and the
        // lesson carries that score.
        const scored = await scores(past, task);
        expect(scored.get(picked.rootCause)).toBeGreaterThan(scored.get(other.rootCause)!);
        const [lesson] = (await memory.findSimilarFailures(task, { excludeWorkflowId: asking })).filter(
          (l) => l.rootCause === picked.rootCause || l.rootCause === other.rootCause,
        );
        expect(lesson).toMatchObject({
          rootCause: picked.rootCause,
          similarity: scored.get(picked.rootCause),
        });
      },
    );
  });

  test('two failures that match the task equally: the later iteration is handed on, whatever order they were stored in', async () => {
    // Neither shares a word with the quoting task; iteration 3 is stored before iteration 2.
    const later: Omit<FailureRecord, 'workflowId' | 'iteration'> = {
      testOutput: 'E   SyntaxError: unmatched bracket',
      rootCause: 'The new helper module has a syntax error on its first line',
      fixHypothesis: 'Remove the stray bracket from the helper module',
      filesToChange: ['tests/helpers.py'],
    };
    const earlier: Omit<FailureRecord, 'workflowId' | 'iteration'> = {
      testOutput: "E   ImportError: cannot import name 'load' from 'helpers'",
      rootCause: 'The helper module was never added to the package',
      fixHypothesis: 'Create the helper module next to the tests',
      filesToChange: ['tests/helpers.py'],
    };
    const past = await pastRun([
      [3, later],
      [2, earlier],
    ]);
    const scored = await scores(past, QUOTING_TASK);
    expect(scored.size).toBe(2);
    expect(scored.get(later.rootCause)).toBe(scored.get(earlier.rootCause));

    const message = await plannerSees(QUOTING_TASK);
    expect(message).toContain(`What went wrong: ${later.rootCause}`);
    expect(message).not.toContain(earlier.rootCause);
  });
}

describe('the best failure of a past run, on embedded PGlite', () => {
  const dir = tempDir('best-failure');
  bestFailureSuite(
    () => openFailureMemory({ dataDir: dir }),
    async () => fs.rmSync(dir, { recursive: true, force: true }),
  );
});

describePostgres('the best failure of a past run, on Postgres', (url) => {
  const schema = freshSchemaName('best_failure');
  bestFailureSuite(
    async () => {
      await preparePostgres(url);
      return openFailureMemory({ databaseUrl: url, schema });
    },
    () => dropSchema(url, schema),
  );
});
