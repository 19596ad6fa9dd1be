/**
 * Where the failure-memory tests find a real Postgres, and fresh throw-away schemas in it.
 *
 * DATABASE_URL wins. In CI (CI=true) it is required: a missing server must fail the suite, not
 * quietly skip the half that matters. Locally, without it, the usual dev server is used when it
 * answers, and the Postgres tests are skipped with a note when it does not.
 */
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';

export const LOCAL_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

export type PostgresTarget =
  { kind: 'url'; url: string } | { kind: 'missing-in-ci' } | { kind: 'unavailable'; url: string };

/** Decided synchronously, because jest needs to know which describe blocks exist up front. */
export function postgresTarget(): PostgresTarget {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) return { kind: 'url', url: fromEnv };
  if (process.env.CI === 'true') return { kind: 'missing-in-ci' };
  return tcpReachable(LOCAL_DATABASE_URL)
    ? { kind: 'url', url: LOCAL_DATABASE_URL }
    : { kind: 'unavailable', url: LOCAL_DATABASE_URL };
}

/**
 * Registers the Postgres half of a suite: the real tests when a server is configured, a failing
 * test in CI without DATABASE_URL, and a visible skip otherwise.
 */
export function describePostgres(title: string, body: (url: string) => void): void {
  const target = postgresTarget();
  if (target.kind === 'url') {
    describe(title, () => body(target.url));
  } else if (target.kind === 'missing-in-ci') {
    describe(title, () => {
      test('DATABASE_URL is set (required when CI=true)', () => {
        throw new Error(
          'DATABASE_URL is not set but CI=true: the failure-memory tests must run against a real Postgres in CI',
        );
      });
    });
  } else {
    describe.skip(`${title} (no DATABASE_URL and nothing answers at ${target.url})`, () => body(target.url));
  }
}

function tcpReachable(url: string): boolean {
  const { hostname, port } = new URL(url);
  const probe = `require('net').connect(${Number(port || 5432)}, ${JSON.stringify(hostname)})
    .on('connect', () => process.exit(0)).on('error', () => process.exit(1)); setTimeout(() => process.exit(1), 2000);`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 5000 }).status === 0;
}

/** A schema name no other run uses, so reruns and parallel runs never see each other's rows. */
export function freshSchemaName(label: string): string {
  return `aca_test_${label}_${crypto.randomBytes(4).toString('hex')}`;
}

/**
 * pg_trgm must exist in `public` before a test schema runs the migrations; otherwise the first
 * schema would own the extension and dropping that schema would take it from the others.
 */
export async function preparePostgres(url: string): Promise<void> {
  await withClient(url, (c) => c.query('CREATE EXTENSION IF NOT EXISTS pg_trgm'));
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
}

export async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export function tempDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `aca-memory-${label}-`));
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${crypto.randomBytes(5).toString('hex')}`;
}

/**
 * A fresh schema for a whole worker (which opens memory from DATABASE_URL alone): created here,
 * and put first on the search path through the URL's `options`, so runs of other tests and of
 * earlier test sessions in the same database cannot be ranked among the lessons.
 */
export async function isolatedDatabaseUrl(
  url: string,
  label: string,
): Promise<{ url: string; schema: string }> {
  const schema = freshSchemaName(label);
  await preparePostgres(url);
  await withClient(url, (c) => c.query(`CREATE SCHEMA ${schema}`));
  const isolated = new URL(url);
  isolated.searchParams.set('options', `-c search_path=${schema},public`);
  return { url: isolated.toString(), schema };
}
