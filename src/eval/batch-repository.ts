/**
 * Every SQL statement on `aca eval` batches kept in Postgres (DATABASE_URL set): workers on hosts
 * that share no folder share the database, so any of them reads the batch's instances and writes
 * its results. The tables come from src/memory/migrations.ts, like failure memory's.
 *
 * Idempotency: a retried step saves the same rows again, so every write is an upsert keyed by
 * (batch, instance), and the last save wins, as a file replaced by rename does.
 */
import type { Pool, QueryResultRow } from 'pg';
import { applyMigrations } from '../memory/migrations';
import { toMemoryError } from '../memory/memory-errors';
import { createPostgresPool } from '../memory/postgres-pool';
import { UserInputError } from '../shared/errors';
import {
  parseStoredInstance,
  type EvalBatchStore,
  type InstanceResult,
  type StoredInstance,
} from './batch-store';

const SUBJECT = 'the eval batch store';
/** Rows one statement writes or reads: bounded, whatever the batch's size. */
const PAGE = 500;

export class PgEvalBatchStore implements EvalBatchStore {
  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly batchId: string,
  ) {}

  async saveInstances(stored: StoredInstance[], submitted: ReadonlySet<string>): Promise<void> {
    // Another batch's rows would mix with these (and its results be overwritten): refused.
    const taken = await this.query(
      'look up the batch',
      'SELECT 1 FROM eval_instances WHERE batch_id = $1 LIMIT 1',
      [this.batchId],
    );
    if (taken.rows.length > 0) {
      throw new UserInputError(`the database holds a batch ${this.batchId} already: choose another --id`);
    }
    let submittedSeq = 0;
    const rows = stored.map((s, seq) => {
      const id = s.instance.instance_id;
      return [id, seq, submitted.has(id) ? submittedSeq++ : null, JSON.stringify(s)] as const;
    });
    for (let i = 0; i < rows.length; i += PAGE) {
      const page = rows.slice(i, i + PAGE);
      await this.query(
        'save the instances',
        `INSERT INTO eval_instances (batch_id, instance_id, seq, submitted_seq, body)
         SELECT $1, * FROM unnest($2::text[], $3::int[], $4::int[], $5::text[])
         ON CONFLICT (batch_id, instance_id) DO UPDATE
           SET seq = EXCLUDED.seq, submitted_seq = EXCLUDED.submitted_seq, body = EXCLUDED.body`,
        [
          this.batchId,
          page.map((r) => r[0]),
          page.map((r) => r[1]),
          page.map((r) => r[2]),
          page.map((r) => r[3]),
        ],
      );
    }
  }

  async submittedIds(from: number, count: number): Promise<string[]> {
    const { rows } = await this.query<{ instance_id: string }>(
      'page the instances',
      `SELECT instance_id FROM eval_instances
       WHERE batch_id = $1 AND submitted_seq >= $2 AND submitted_seq < $3
       ORDER BY submitted_seq`,
      [this.batchId, from, from + count],
    );
    return rows.map((r) => r.instance_id);
  }

  async instance(id: string): Promise<StoredInstance> {
    const { rows } = await this.query<{ body: string }>(
      'read an instance',
      'SELECT body FROM eval_instances WHERE batch_id = $1 AND instance_id = $2',
      [this.batchId, id],
    );
    if (!rows[0]) throw new Error(`instance ${id} is not in batch ${this.batchId}`);
    return parseStoredInstance(rows[0].body);
  }

  async result(id: string): Promise<InstanceResult | null> {
    const { rows } = await this.query<{ body: string }>(
      'read a result',
      'SELECT body FROM eval_results WHERE batch_id = $1 AND instance_id = $2',
      [this.batchId, id],
    );
    return rows[0] ? (JSON.parse(rows[0].body) as InstanceResult) : null;
  }

  async saveResult(result: InstanceResult): Promise<void> {
    await this.query(
      'save a result',
      `INSERT INTO eval_results (batch_id, instance_id, body) VALUES ($1, $2, $3)
       ON CONFLICT (batch_id, instance_id) DO UPDATE SET body = EXCLUDED.body, updated_at = now()`,
      [this.batchId, result.instance_id, JSON.stringify(result)],
    );
  }

  async *reportRows(): AsyncIterable<{ id: string; result: InstanceResult | null }> {
    for (let from = 0; ; from += PAGE) {
      const { rows } = await this.query<{ instance_id: string; body: string | null }>(
        'read the results',
        `SELECT i.instance_id, r.body FROM eval_instances i
         LEFT JOIN eval_results r ON r.batch_id = i.batch_id AND r.instance_id = i.instance_id
         WHERE i.batch_id = $1 AND i.seq >= $2 AND i.seq < $3
         ORDER BY i.seq`,
        [this.batchId, from, from + PAGE],
      );
      for (const row of rows) {
        yield {
          id: row.instance_id,
          result: row.body === null ? null : (JSON.parse(row.body) as InstanceResult),
        };
      }
      if (rows.length < PAGE) return;
    }
  }

  /** Removes the batch's rows: it could not be started. */
  async discard(): Promise<void> {
    await this.query('discard the batch', 'DELETE FROM eval_results WHERE batch_id = $1', [this.batchId]);
    await this.query('discard the batch', 'DELETE FROM eval_instances WHERE batch_id = $1', [this.batchId]);
  }

  private async query<R extends QueryResultRow = QueryResultRow>(
    action: string,
    sql: string,
    params: unknown[],
  ) {
    try {
      const pool = await this.pool();
      return await pool.query<R>(sql, params);
    } catch (err) {
      throw toMemoryError(err, action, SUBJECT);
    }
  }
}

/**
 * The database of DATABASE_URL for batches: a pool opened on first use, its schema brought up to
 * date (`schema`: tests keep their tables in one of their own). A failed opening is tried again
 * by the next call.
 */
export function evalDatabase(databaseUrl: string, schema?: string): EvalDatabase {
  let opening: Promise<Pool> | null = null;
  const open = async (): Promise<Pool> => {
    const pool = await createPostgresPool(databaseUrl, {
      applicationName: 'aca-eval',
      ...(schema !== undefined ? { schema } : {}),
    });
    try {
      await applyMigrations(pool, schema !== undefined ? { schema } : {});
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return pool;
  };
  return {
    pool() {
      opening ??= open().catch((err: unknown) => {
        opening = null;
        throw err;
      });
      return opening;
    },
    async close() {
      const pool = opening ? await opening.catch(() => null) : null;
      opening = null;
      await pool?.end();
    },
  };
}

export interface EvalDatabase {
  pool(): Promise<Pool>;
  close(): Promise<void>;
}
