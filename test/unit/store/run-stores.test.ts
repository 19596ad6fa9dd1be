/**
 * The run stores' contract (conversations and full test reports), run against both
 * implementations: files under a folder, and Postgres. Whichever a worker uses, the agents and
 * activities above them must see the same behaviour.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { Conversation, ConversationStore } from '../../../src/store/conversation-store';
import { FileConversationStore } from '../../../src/store/conversation-store';
import { FileReportStore, reportRef, type ReportStore } from '../../../src/store/report-store';
import { MemoryUnavailableError } from '../../../src/memory/memory-errors';
import { openPostgresRunStores, type RunStores } from '../../../src/store/run-store-repository';
import type { TestRunReport } from '../../../src/shared/types';
import { getFreePort } from '../../../src/temporal/dev-server';
import {
  describePostgres,
  dropSchema,
  freshSchemaName,
  preparePostgres,
  tempDir,
  uniqueId,
  withClient,
} from '../../helpers/pg-test-env';

function conversation(ref: string, overrides: Partial<Conversation> = {}): Conversation {
  return {
    ref,
    role: 'coder',
    model: 'scripted:any',
    language: 'python',
    workspace: '/tmp/ws',
    protectedPaths: ['tests/test_a.py'],
    entries: [
      { kind: 'system', content: 'You are the Coder.' },
      { kind: 'user', content: 'Write hello.py ✓ – ünïcödé, "quotes", \\ and a NUL: \u0000' },
      { kind: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'create_file', arguments: '{}' }] },
    ],
    toolResults: { c1: { ok: true, path: 'hello.py' } } as unknown as Conversation['toolResults'],
    steps: [],
    ...overrides,
  };
}

function report(passed: number, failed: number, output = 'FAILED test_a.py::test_x'): TestRunReport {
  return {
    outcome: 'completed',
    passed,
    failed,
    errors: 0,
    skipped: 0,
    passRate: passed / (passed + failed),
    cases: [{ name: 'test_x', status: failed ? 'failed' : 'passed', message: 'assert 1 == 2' }],
    output,
    cutBytes: 0,
    durationMs: 1234,
    sandbox: 'none',
  };
}

const BAD_REF_VALUES = [
  '',
  '../escape',
  'run/../../escape',
  'run/..',
  '.',
  'run/./x',
  '/etc/passwd',
  'a//b',
  'a/',
  'sp ace',
  'semi;colon',
  "quote'd",
  'back\\slash',
  'x'.repeat(1001),
];
/** [how the test is named, the reference]. */
const BAD_REFS = BAD_REF_VALUES.map((ref) => [
  ref.length > 40 ? `of ${ref.length} characters` : JSON.stringify(ref),
  ref,
]);

interface StorePair {
  conversations: ConversationStore;
  reports: ReportStore;
}

function runStoreContract(label: string, open: () => Promise<StorePair>, close: () => Promise<void>): void {
  describe(label, () => {
    let stores: StorePair;
    beforeAll(async () => {
      stores = await open();
    });
    afterAll(close);

    test('a saved conversation loads back equal, and exists', async () => {
      const ref = `${uniqueId('wf')}/run-1/coder-1`;
      expect(await stores.conversations.exists(ref)).toBe(false);
      const saved = conversation(ref);
      await stores.conversations.save(saved);
      expect(await stores.conversations.exists(ref)).toBe(true);
      expect(await stores.conversations.load(ref)).toEqual(saved);
    });

    test('saving the same reference again replaces it (a retried activity)', async () => {
      const ref = `${uniqueId('wf')}/run-1/planner-1`;
      await stores.conversations.save(conversation(ref, { model: 'first' }));
      await stores.conversations.save(conversation(ref, { model: 'second' }));
      await Promise.all(
        [1, 2, 3].map(() => stores.conversations.save(conversation(ref, { model: 'third' }))),
      );
      expect((await stores.conversations.load(ref)).model).toBe('third');
    });

    test('references that only share a prefix are different conversations', async () => {
      const base = uniqueId('wf');
      await stores.conversations.save(conversation(`${base}/a`, { model: 'a' }));
      await stores.conversations.save(conversation(`${base}/a/b`, { model: 'a/b' }));
      expect((await stores.conversations.load(`${base}/a`)).model).toBe('a');
      expect((await stores.conversations.load(`${base}/a/b`)).model).toBe('a/b');
      expect(await stores.conversations.exists(`${base}/a/c`)).toBe(false);
    });

    test('loading a conversation that was never saved fails with ENOENT', async () => {
      await expect(stores.conversations.load(`${uniqueId('wf')}/missing`)).rejects.toMatchObject({
        code: 'ENOENT',
      });
    });

    test('a conversation of a few MB round-trips', async () => {
      const ref = `${uniqueId('wf')}/big`;
      const file = 'def f():\n    return "x"\n'.repeat(150_000); // ~3.6 MB
      const big = conversation(ref, {
        entries: [{ kind: 'user', content: file }],
        toolResults: { c1: { ok: true, content: file } } as unknown as Conversation['toolResults'],
      });
      await stores.conversations.save(big);
      expect(await stores.conversations.load(ref)).toEqual(big);
    });

    test.each(BAD_REFS)(
      'the conversation reference %s is refused by save, load and exists',
      async (_label, ref) => {
        await expect(stores.conversations.save(conversation(ref))).rejects.toThrow(
          /invalid conversation reference/,
        );
        await expect(stores.conversations.load(ref)).rejects.toThrow(/invalid conversation reference/);
        await expect(stores.conversations.exists(ref)).rejects.toThrow(/invalid conversation reference/);
      },
    );

    test('a saved report loads back equal; saving again replaces it', async () => {
      const ref = reportRef(`${uniqueId('wf')}/run-1`, 1);
      await stores.reports.saveReport(ref, report(1, 2));
      expect(await stores.reports.loadReport(ref)).toEqual(report(1, 2));
      await stores.reports.saveReport(ref, report(3, 0, 'all passed \u0000'));
      expect(await stores.reports.loadReport(ref)).toEqual(report(3, 0, 'all passed \u0000'));
    });

    test('loading a report that was never saved gives null', async () => {
      expect(await stores.reports.loadReport(reportRef(`${uniqueId('wf')}/run-1`, 0))).toBeNull();
    });

    test.each(BAD_REFS)(
      'the report reference %s is refused by saveReport and loadReport',
      async (_label, ref) => {
        await expect(stores.reports.saveReport(ref, report(1, 0))).rejects.toThrow(
          /invalid report reference/,
        );
        await expect(stores.reports.loadReport(ref)).rejects.toThrow(/invalid report reference/);
      },
    );
  });
}

describe('run stores', () => {
  let root: string;
  runStoreContract(
    'in files',
    async () => {
      root = tempDir('run-files');
      const runs = path.join(root, 'runs');
      return { conversations: new FileConversationStore(runs), reports: new FileReportStore(runs) };
    },
    async () => {
      // Nothing was written outside the store's folder (the bad references included).
      expect(fs.readdirSync(root)).toEqual(['runs']);
      fs.rmSync(root, { recursive: true, force: true });
    },
  );

  test("in files: a save makes the run's folder, and makes it again once it is gone, leaving no temporary file", async () => {
    const runs = path.join(tempDir('run-files-folders'), 'runs');
    const conversations = new FileConversationStore(runs);
    const workflow = uniqueId('wf');
    const ref = `${workflow}/run-1/coder-1`;
    await conversations.save(conversation(ref));
    await conversations.save(conversation(`${workflow}/run-1/coder-2`));
    fs.rmSync(path.join(runs, workflow), { recursive: true });
    await conversations.save(conversation(ref));
    expect(await conversations.load(ref)).toEqual(conversation(ref));
    expect(fs.readdirSync(path.join(runs, workflow, 'run-1'))).toEqual(['coder-1.json']);
  });

  describePostgres('in Postgres', (url) => {
    const schema = freshSchemaName('runs');
    let stores: RunStores;

    beforeAll(async () => {
      await preparePostgres(url);
    });
    afterAll(async () => {
      await stores?.close();
      await dropSchema(url, schema);
    });

    runStoreContract(
      'contract',
      async () => {
        stores = openPostgresRunStores(url, { schema });
        return stores;
      },
      async () => undefined,
    );

    test('a retried save leaves one row per reference', async () => {
      const ref = `${uniqueId('wf')}/retried`;
      await stores.conversations.save(conversation(ref));
      await stores.conversations.save(conversation(ref));
      await stores.reports.saveReport(ref, report(1, 1));
      await stores.reports.saveReport(ref, report(1, 1));
      const counts = await withClient(url, async (c) => {
        const conversations = await c.query(
          `SELECT count(*)::int AS n FROM ${schema}.run_conversations WHERE ref = $1`,
          [ref],
        );
        const reports = await c.query(`SELECT count(*)::int AS n FROM ${schema}.run_reports WHERE ref = $1`, [
          ref,
        ]);
        return [conversations.rows[0].n, reports.rows[0].n];
      });
      expect(counts).toEqual([1, 1]);
    });

    test('an unreachable server is a retryable error; a closed store refuses', async () => {
      const down = openPostgresRunStores('postgres://postgres@127.0.0.1:1/test', {
        connectTimeoutMs: 2000,
        retryUnavailableForMs: 0,
      });
      try {
        const err: unknown = await down.conversations.exists('wf/x').catch((e: unknown) => e);
        expect(err).toBeInstanceOf(MemoryUnavailableError);
        expect((err as MemoryUnavailableError).retryable).toBe(true);
      } finally {
        await down.close();
      }
      await expect(down.reports.loadReport('wf/x')).rejects.toThrow(/closed/);
    });

    test('a call made while the server is down waits for it to come back', async () => {
      const port = await getFreePort();
      const target = new URL(url);
      const viaRelay = new URL(url);
      viaRelay.hostname = '127.0.0.1';
      viaRelay.port = String(port);
      const late = openPostgresRunStores(viaRelay.toString(), { schema, retryUnavailableForMs: 15_000 });
      // Nothing listens on the port for the first second: connections are refused.
      const relay = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) s.on('error', () => undefined);
        client.pipe(upstream).pipe(client);
      });
      const started = Date.now();
      const listening = new Promise<void>((resolve) =>
        setTimeout(() => relay.listen(port, '127.0.0.1', resolve), 1_000),
      );
      try {
        const ref = `${uniqueId('wf')}/late`;
        await late.reports.saveReport(ref, report(2, 0));
        expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
        expect(await late.reports.loadReport(ref)).toEqual(report(2, 0));
      } finally {
        await listening;
        await late.close();
        await new Promise((resolve) => relay.close(resolve));
      }
    });
  });
});
