/**
 * The schema of aca's database (failure memory, and the runs' conversations and test reports when
 * they are kept in Postgres) as an ordered list of migrations, and the runner that applies the
 * missing ones when memory is opened.
 *
 * Why versioned: the schema will change after people have memories worth keeping, so each change
 * is a new entry appended here (never edit an applied one; the runner refuses renamed history).
 * Why an advisory lock: several workers (and the CLI) may open the same database at the same
 * moment; `CREATE EXTENSION/TABLE IF NOT EXISTS` is not safe against itself when run
 * concurrently (both see "missing", one dies on a unique violation in the catalog). The
 * session-level lock serializes the runners, and Postgres drops it if the process dies.
 */
import type { Pool, PoolClient } from 'pg';
import { isConnectionError, toMemoryError } from './memory-errors';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks, iterations, failures, fixes',
    sql: `
      CREATE EXTENSION IF NOT EXISTS pg_trgm;

      -- One row per agent run (Temporal workflow id).
      CREATE TABLE tasks (
        workflow_id text PRIMARY KEY,
        task        text NOT NULL,
        language    text NOT NULL,
        status      text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'success', 'failed')),
        reason      text,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      );

      -- Test results per iteration, for trends; the key makes a retried activity a no-op.
      CREATE TABLE iterations (
        workflow_id text NOT NULL REFERENCES tasks (workflow_id) ON DELETE CASCADE,
        iteration   integer NOT NULL,
        pass_rate   double precision NOT NULL,
        passed      integer NOT NULL,
        failed      integer NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workflow_id, iteration)
      );

      -- What went wrong and what the Reflector thought about it, one per (run, iteration, kind).
      CREATE TABLE failures (
        id              bigserial PRIMARY KEY,
        workflow_id     text NOT NULL REFERENCES tasks (workflow_id) ON DELETE CASCADE,
        iteration       integer NOT NULL,
        kind            text NOT NULL,
        test_output     text NOT NULL,
        root_cause      text NOT NULL,
        fix_hypothesis  text NOT NULL,
        files_to_change text[] NOT NULL DEFAULT '{}',
        created_at      timestamptz NOT NULL DEFAULT now(),
        -- The analysis weighs more than the raw output when matching error text.
        search          tsvector GENERATED ALWAYS AS (
                          setweight(to_tsvector('english', root_cause || ' ' || fix_hypothesis), 'A') ||
                          setweight(to_tsvector('english', test_output), 'C')
                        ) STORED,
        CONSTRAINT failures_key UNIQUE (workflow_id, iteration, kind)
      );

      -- What finally made a run pass after it had failed: one summary per run, joined to its
      -- failures at read time so the order in which the rows arrive does not matter.
      CREATE TABLE fixes (
        workflow_id text PRIMARY KEY REFERENCES tasks (workflow_id) ON DELETE CASCADE,
        iteration   integer NOT NULL,
        summary     text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 2,
    name: 'search indexes',
    sql: `
      CREATE INDEX tasks_task_trgm ON tasks USING gin (task gin_trgm_ops);
      CREATE INDEX failures_search ON failures USING gin (search);
      CREATE INDEX failures_created ON failures (created_at DESC);
    `,
  },
  {
    version: 3,
    name: 'run conversations and test reports',
    // What runs keep outside workflow history, when DATABASE_URL is set (src/store/run-store-repository.ts),
    // so that any worker on any host can load what another saved. One row per reference.
    //
    // text, not jsonb: the stores only ever write and read whole documents (a conversation can
    // be a few MB and is rewritten at every agent step), so parsing them into jsonb on every write
    // and printing them back on every read would be server work for nothing; and jsonb refuses
    // the escaped NUL character (\u0000) that test output or a file's contents may carry. Large
    // values are compressed and kept out of line by TOAST either way.
    sql: `
      CREATE TABLE run_conversations (
        ref        text PRIMARY KEY,
        body       text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );

      CREATE TABLE run_reports (
        ref        text PRIMARY KEY,
        body       text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 4,
    name: 'task words stored',
    // A lesson lookup ranks every stored failure against the new task's words, its own task's
    // words included: computed once per task here rather than once per failure on every lookup.
    sql: `
      ALTER TABLE tasks ADD COLUMN task_search tsvector
        GENERATED ALWAYS AS (to_tsvector('english', task)) STORED;
    `,
  },
  {
    version: 5,
    name: 'eval batches',
    // An `aca eval` batch's instances and results, when DATABASE_URL is set
    // (src/eval/batch-repository.ts): workers on hosts that share no folder all read them. `seq`
    // orders every instance the report counts; `submitted_seq` numbers those the batch runs, so
    // the workflow pages them by a cursor instead of carrying the list.
    sql: `
      CREATE TABLE eval_instances (
        batch_id      text NOT NULL,
        instance_id   text NOT NULL,
        seq           integer NOT NULL,
        submitted_seq integer,
        body          text NOT NULL,
        PRIMARY KEY (batch_id, instance_id),
        UNIQUE (batch_id, seq),
        UNIQUE (batch_id, submitted_seq)
      );

      CREATE TABLE eval_results (
        batch_id    text NOT NULL,
        instance_id text NOT NULL,
        body        text NOT NULL,
        updated_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (batch_id, instance_id)
      );
    `,
  },
];

/** Arbitrary constant shared by every aca process: "the failure-memory migration lock". */
export const MIGRATION_LOCK_KEY = 0x0aca_3e30;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema))
    throw new Error(`invalid schema name "${schema}" (use lower-case letters, digits, _)`);
}

/**
 * Applies the migrations the database lacks, in order, each in its own transaction together
 * with its `schema_migrations` row. Returns the versions applied by this call (empty when the
 * database was current). `schema`, when given, is created first; the pool's connections must
 * already have it first on their search_path.
 */
export async function applyMigrations(
  pool: Pool,
  options: { schema?: string; migrations?: readonly Migration[] } = {},
): Promise<number[]> {
  const migrations = options.migrations ?? MIGRATIONS;
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw toMemoryError(err, 'connect to apply migrations');
  }
  let lost: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      return await applyPending(client, migrations, options.schema);
    } finally {
      // Unlock explicitly: the connection goes back to the pool and the session lives on.
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } catch (err) {
    // A dead connection is thrown away (its session, and so its lock, ends with it).
    if (isConnectionError(err)) lost = err as Error;
    throw toMemoryError(err, 'apply migrations');
  } finally {
    client.release(lost);
  }
}

async function applyPending(
  client: PoolClient,
  migrations: readonly Migration[],
  schema: string | undefined,
): Promise<number[]> {
  if (schema !== undefined) {
    assertSchemaName(schema);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  }
  await client.query(`
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
  const { rows } = await client.query<{ version: number; name: string }>(
    'SELECT version, name FROM schema_migrations',
  );
  const applied = new Map(rows.map((r) => [r.version, r.name]));
  assertOrdered(migrations);
  const done: number[] = [];
  for (const migration of migrations) {
    const existing = applied.get(migration.version);
    if (existing !== undefined) {
      if (existing !== migration.name) {
        throw new Error(
          `schema_migrations has version ${migration.version} as "${existing}" but this build calls it "${migration.name}"; applied migrations must not be edited`,
        );
      }
      continue;
    }
    await client.query('BEGIN');
    try {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    done.push(migration.version);
  }
  // Versions newer than this build (a newer worker migrated first) are left alone: migrations
  // only add, so older code keeps working against a newer schema.
  return done;
}

function assertOrdered(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`migration "${m.name}" has version ${m.version}, expected ${i + 1}`);
  });
}
