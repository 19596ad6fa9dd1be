/**
 * Every SQL statement that reads or writes failure memory lives here (the schema lives in
 * migrations.ts). Keeping them together means one place to check that each write is idempotent
 * and that every error is classified for Temporal's retry policy.
 *
 * Idempotency: activities are retried after crashes and timeouts, so a write may arrive twice.
 * Each write is keyed by (workflow id[, iteration[, kind]]) with a unique constraint, and uses
 * `ON CONFLICT ... DO UPDATE` so the last attempt (the one whose result the workflow saw) wins
 * and no row is ever duplicated.
 *
 * The repository works on a `pg.Pool`; open-memory.ts builds one for a real server or for the
 * embedded PGlite, so the SQL below runs unchanged on both.
 */
import type { Pool, QueryResultRow } from 'pg';
import type { Lesson } from '../shared/types';
import { LIMITS, clipEnd, clipStart } from './bound-text';
import { MemoryQueryError, toMemoryError } from './memory-errors';
import {
  DEFAULT_FAILURE_KIND,
  type FailureMemory,
  type FailureRecord,
  type FixRecord,
  type IterationRecord,
  type NewTask,
  type PastFailure,
  type SimilarOptions,
  type TaskStatus,
} from './failure-memory';

export * from './failure-memory';

/**
 * The shared ranking: trigram similarity of the task texts (same kind of task) plus full-text
 * rank of the failure's analysis and output against the query words (same kind of error).
 * The words are OR-ed (plainto_tsquery ANDs them, which long task texts never satisfy) and
 * ts_rank's normalization 32 maps the rank into 0..1 so the two parts can be added.
 *   $1 task text (trigrams)   $2 text for words   $3 workflow id to exclude or null   $4 min score
 */
const SCORED_FAILURES = `
  WITH words AS (
    SELECT NULLIF(replace(plainto_tsquery('english', $2)::text, ' & ', ' | '), '')::tsquery AS query
  ),
  scored AS (
    SELECT f.workflow_id, f.iteration, f.kind, f.root_cause, f.fix_hypothesis, f.files_to_change,
           f.created_at, t.task, t.language, t.status, x.summary AS fix,
           (0.6 * similarity(t.task, $1)
             + 0.25 * COALESCE(ts_rank(f.search, w.query, 32), 0)
             + 0.15 * COALESCE(ts_rank(t.task_search, w.query, 32), 0)
           )::float8 AS score
    FROM failures f
    JOIN tasks t ON t.workflow_id = f.workflow_id
    LEFT JOIN fixes x ON x.workflow_id = f.workflow_id
    CROSS JOIN words w
    WHERE ($3::text IS NULL OR f.workflow_id <> $3::text)
  )`;

interface ScoredRow {
  workflow_id: string;
  iteration: number;
  kind: string;
  root_cause: string;
  fix_hypothesis: string;
  files_to_change: string[];
  created_at: Date | string;
  task: string;
  language: string;
  status: TaskStatus;
  fix: string | null;
  score: number;
}

export interface RepositoryOptions {
  description: string;
  /** Releases what the pool runs on (the PGlite instance and its folder lock), after pool.end(). */
  onClose?: () => Promise<void>;
  /** A snapshot copy: writes would vanish with it, so they are refused. */
  readOnly?: boolean;
  /** Migration versions that opening this memory applied (empty when the schema was current). */
  migrationsApplied?: number[];
}

export class PgFailureRepository implements FailureMemory {
  readonly description: string;
  readonly migrationsApplied: readonly number[];
  private closed = false;
  /** Lesson lookups under way, by question, shared by callers asking the same one at once. */
  private readonly lookups = new Map<string, Promise<ScoredRow[]>>();

  constructor(
    private readonly pool: Pool,
    private readonly options: RepositoryOptions,
  ) {
    this.description = options.description;
    this.migrationsApplied = options.migrationsApplied ?? [];
  }

  async createTask(task: NewTask): Promise<void> {
    // DO NOTHING rather than UPDATE: a retried or continued-as-new run must not reset a status.
    await this.write(
      'create a task',
      `INSERT INTO tasks (workflow_id, task, language) VALUES ($1, $2, $3)
       ON CONFLICT (workflow_id) DO NOTHING`,
      [requireId(task.workflowId), clipEnd(task.task, LIMITS.task), task.language],
    );
  }

  async updateTaskStatus(
    workflowId: string,
    status: TaskStatus,
    reason: string | null = null,
  ): Promise<void> {
    const result = await this.write(
      'update a task status',
      `UPDATE tasks SET status = $2, reason = $3, updated_at = now() WHERE workflow_id = $1`,
      [requireId(workflowId), status, reason === null ? null : clipEnd(reason, LIMITS.analysis)],
    );
    if (result.rowCount === 0)
      throw new MemoryQueryError(`no task with workflow id "${workflowId}" (createTask first)`, undefined);
  }

  async logIteration(record: IterationRecord): Promise<void> {
    await this.write(
      'log an iteration',
      `INSERT INTO iterations (workflow_id, iteration, pass_rate, passed, failed) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (workflow_id, iteration)
       DO UPDATE SET pass_rate = EXCLUDED.pass_rate, passed = EXCLUDED.passed, failed = EXCLUDED.failed`,
      [
        requireId(record.workflowId),
        requireIteration(record.iteration),
        record.passRate,
        record.passed,
        record.failed,
      ],
    );
  }

  async storeFailure(record: FailureRecord): Promise<void> {
    const files = record.filesToChange.slice(0, LIMITS.fileCount).map((f) => clipEnd(f, LIMITS.filePath));
    await this.write(
      'store a failure',
      `INSERT INTO failures (workflow_id, iteration, kind, test_output, root_cause, fix_hypothesis, files_to_change)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT ON CONSTRAINT failures_key
       DO UPDATE SET test_output = EXCLUDED.test_output, root_cause = EXCLUDED.root_cause,
                     fix_hypothesis = EXCLUDED.fix_hypothesis, files_to_change = EXCLUDED.files_to_change`,
      [
        requireId(record.workflowId),
        requireIteration(record.iteration),
        record.kind ?? DEFAULT_FAILURE_KIND,
        clipStart(record.testOutput, LIMITS.testOutput),
        clipEnd(record.rootCause, LIMITS.analysis),
        clipEnd(record.fixHypothesis, LIMITS.analysis),
        files,
      ],
    );
  }

  async recordFix(record: FixRecord): Promise<number> {
    const result = await this.write<{ explained: number }>(
      'record a fix',
      `WITH fix AS (
         INSERT INTO fixes (workflow_id, iteration, summary) VALUES ($1, $2, $3)
         ON CONFLICT (workflow_id) DO UPDATE SET iteration = EXCLUDED.iteration, summary = EXCLUDED.summary
         RETURNING workflow_id
       )
       SELECT count(*)::int AS explained FROM failures f JOIN fix ON fix.workflow_id = f.workflow_id`,
      [requireId(record.workflowId), requireIteration(record.iteration), clipEnd(record.summary, LIMITS.fix)],
    );
    return result.rows[0]?.explained ?? 0;
  }

  async findSimilarFailures(taskText: string, options: SimilarOptions = {}): Promise<Lesson[]> {
    const limit = clampInt(options.limit ?? 3, 1, 20);
    const maxChars = clampInt(options.maxChars ?? 800, 80, 20_000);
    const words = options.errorText ? `${taskText}\n${options.errorText.slice(-4000)}` : taskText;
    const task = clipEnd(taskText, LIMITS.task);
    const minScore = options.minScore ?? 0.1;
    // Runs started together on the same task (a batch, a benchmark, retries) ask the same
    // question at once: one lookup answers them all. It leaves no run out and takes one row
    // more; each caller then drops its own run's row, which is at most one since the lookup
    // keeps the best failure per run, so every caller gets exactly its own top `limit`.
    const key = JSON.stringify([task, words, minScore, limit]);
    let shared = this.lookups.get(key);
    if (!shared) {
      shared = this.bestPerRun(task, words, minScore, limit + 1).finally(() => this.lookups.delete(key));
      this.lookups.set(key, shared);
    }
    const rows = await shared;
    return rows
      .filter((row) => row.workflow_id !== options.excludeWorkflowId)
      .slice(0, limit)
      .map((row) => toLesson(row, maxChars));
  }

  /** Best failure per past run, so one run with many iterations cannot fill every slot. */
  private async bestPerRun(
    task: string,
    words: string,
    minScore: number,
    limit: number,
  ): Promise<ScoredRow[]> {
    const result = await this.run<ScoredRow>(
      'find similar failures',
      `${SCORED_FAILURES},
       best AS (
         SELECT DISTINCT ON (workflow_id) * FROM scored
         ORDER BY workflow_id, score DESC, iteration DESC
       )
       SELECT * FROM best WHERE score >= $4
       ORDER BY score DESC, (fix IS NOT NULL) DESC, created_at DESC
       LIMIT $5`,
      [task, words, null, minScore, limit],
    );
    return result.rows;
  }

  async search(text: string, limit = 10): Promise<PastFailure[]> {
    const result = await this.run<ScoredRow>(
      'search failures',
      `${SCORED_FAILURES}
       SELECT * FROM scored WHERE score >= $4
       ORDER BY score DESC, created_at DESC
       LIMIT $5`,
      [clipEnd(text, LIMITS.task), text.slice(0, LIMITS.task), null, 0.05, clampInt(limit, 1, 200)],
    );
    return result.rows.map((row) => ({
      workflowId: row.workflow_id,
      iteration: row.iteration,
      kind: row.kind,
      task: row.task,
      language: row.language,
      status: row.status,
      rootCause: row.root_cause,
      fixHypothesis: row.fix_hypothesis,
      filesToChange: row.files_to_change,
      fix: row.fix,
      score: round(row.score),
      createdAt: new Date(row.created_at).toISOString(),
    }));
  }

  /** Rows stored for one run, for tests and diagnostics (idempotency is checked with this). */
  async rowCounts(
    workflowId: string,
  ): Promise<{ tasks: number; iterations: number; failures: number; fixes: number }> {
    const result = await this.run<{ tasks: number; iterations: number; failures: number; fixes: number }>(
      'count rows',
      `SELECT (SELECT count(*)::int FROM tasks WHERE workflow_id = $1) AS tasks,
              (SELECT count(*)::int FROM iterations WHERE workflow_id = $1) AS iterations,
              (SELECT count(*)::int FROM failures WHERE workflow_id = $1) AS failures,
              (SELECT count(*)::int FROM fixes WHERE workflow_id = $1) AS fixes`,
      [workflowId],
    );
    return result.rows[0]!;
  }

  /** Versions recorded in schema_migrations, ascending. */
  async schemaVersions(): Promise<number[]> {
    const result = await this.run<{ version: number }>(
      'read schema versions',
      'SELECT version FROM schema_migrations ORDER BY version',
      [],
    );
    return result.rows.map((r) => r.version);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.pool.end();
    } finally {
      await this.options.onClose?.();
    }
  }

  private async write<R extends QueryResultRow = QueryResultRow>(
    action: string,
    sql: string,
    params: unknown[],
  ) {
    if (this.options.readOnly)
      throw new MemoryQueryError(`cannot ${action}: ${this.description} is read-only`, undefined);
    return this.run<R>(action, sql, params);
  }

  private async run<R extends QueryResultRow = QueryResultRow>(
    action: string,
    sql: string,
    params: unknown[],
  ) {
    if (this.closed)
      throw new MemoryQueryError(`failure memory is closed (while trying to ${action})`, undefined);
    try {
      // pool.query returns a connection that failed to the pool as broken, so the next call
      // opens a fresh one: that is how the repository recovers once the server is back.
      return await this.pool.query<R>(sql, params);
    } catch (err) {
      throw toMemoryError(err, action);
    }
  }
}

/**
 * Splits a lesson's character budget over its fields: the fix matters most to the Planner, then
 * the root cause, then what was tried, then the task (it is similar to the current one anyway).
 */
function toLesson(row: ScoredRow, maxChars: number): Lesson {
  const share = (fraction: number) => Math.max(20, Math.floor(maxChars * fraction));
  return {
    task: clipEnd(row.task, share(0.2)),
    rootCause: clipEnd(row.root_cause, share(0.3)),
    fixHypothesis: clipEnd(row.fix_hypothesis, share(0.2)),
    fix: row.fix === null ? null : clipEnd(row.fix, share(0.3)),
    similarity: round(row.score),
  };
}

function requireId(workflowId: string): string {
  if (!workflowId) throw new MemoryQueryError('a workflow id is required', undefined);
  return workflowId;
}

function requireIteration(iteration: number): number {
  if (!Number.isInteger(iteration) || iteration < 0)
    throw new MemoryQueryError(`bad iteration number ${iteration}`, undefined);
  return iteration;
}

function clampInt(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.floor(Number.isFinite(value) ? value : min)));
}

function round(score: number): number {
  return Math.round(Number(score) * 1000) / 1000;
}
