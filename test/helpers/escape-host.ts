/**
 * What the sandbox escape suites share (escape.test.ts, and escape-limits.test.ts, which runs
 * alone): the secrets a worker holds, the marker every hostile process carries on its command
 * line, and the check after every test that nothing of the run survived on the host.
 */
import { randomBytes } from 'node:crypto';
import type { TestRunReport } from '../../src/shared/types';
import { pidsWithMarker, sandboxUidPids } from './host-probes';
import { removeWorkspaces } from './workspace-fixture';

export const MARK = `aca-escape-${randomBytes(6).toString('hex')}`;
export const SECRET = 'sk-test-secret';
// Hostile tests search for the secret without spelling it, so a failing test's source quoted in the report is no leak.
export const SECRET_REVERSED = [...SECRET].reverse().join('');

export const py = (s: string): string => JSON.stringify(s);
export const byName = (report: TestRunReport): Record<string, TestRunReport['cases'][number]> =>
  Object.fromEntries(report.cases.map((c) => [c.name.split('::').pop()!, c]));

/**
 * Registers the suite's hooks: the worker's secrets in the environment while it runs, and after
 * every test, no process of this test process's sandbox uids and none carrying the marker.
 */
export function watchHost(): void {
  beforeAll(() => {
    process.env.OPENAI_API_KEY = SECRET;
    process.env.DATABASE_URL = `postgres://aca:${SECRET}@127.0.0.1:5432/aca`;
  });

  afterAll(() => {
    delete process.env.OPENAI_API_KEY;
    delete process.env.DATABASE_URL;
    removeWorkspaces();
  });

  afterEach(async () => {
    // Nothing may survive a run: no process of the sandbox uids this test process gives its runs
    // (its own pool, see test/helpers/node-environment.ts), none carrying our marker. A killed
    // tree can take a moment to be reaped, so allow a short grace period before judging.
    for (
      let waited = 0;
      waited < 3_000 && (sandboxUidPids().length > 0 || pidsWithMarker(MARK).length > 0);
      waited += 100
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(sandboxUidPids()).toEqual([]);
    expect(pidsWithMarker(MARK)).toEqual([]);
  });
}
