/**
 * An agent command's output kept in the report store beside the test reports, in files and in
 * Postgres alike: saved again by a retried call, never read back as a test report or the other
 * way round, under a reference made from any call id a server may send.
 */
import * as path from 'node:path';
import {
  commandOutputRef,
  FileReportStore,
  reportRef,
  type CommandOutput,
  type ReportStore,
} from '../../../src/store/report-store';
import { openPostgresRunStores, type RunStores } from '../../../src/store/run-store-repository';
import { checkRunRef } from '../../../src/shared/run-ref';
import {
  describePostgres,
  dropSchema,
  freshSchemaName,
  preparePostgres,
  tempDir,
  uniqueId,
} from '../../helpers/pg-test-env';

const output = (stdout: string): CommandOutput => ({
  kind: 'command-output',
  command: 'pytest -x',
  exitCode: 1,
  exitSignal: null,
  durationMs: 1234,
  timedOut: false,
  stdout,
  stderr: 'ünïcödé, "quotes", \\ and a NUL: \u0000',
});

function contract(name: string, open: () => Promise<ReportStore>): void {
  describe(name, () => {
    test('saves, replaces and loads an output; a test report is not one', async () => {
      const store = await open();
      const conversation = `${uniqueId('wf')}/run/coder-1`;
      const ref = commandOutputRef(conversation, 'call_1');
      expect(await store.loadCommandOutput(ref)).toBeNull();
      await store.saveCommandOutput(ref, output('first'));
      await store.saveCommandOutput(ref, output('second'));
      expect(await store.loadCommandOutput(ref)).toEqual(output('second'));
      const report = reportRef(conversation.split('/')[0], 1);
      await store.saveReport(report, {
        outcome: 'completed',
        passed: 1,
        failed: 0,
        errors: 0,
        skipped: 0,
        passRate: 1,
        cases: [],
        output: '',
        cutBytes: 0,
        durationMs: 1,
        sandbox: 'none',
      });
      expect(await store.loadCommandOutput(report)).toBeNull();
    });
  });
}

describe('command outputs in the report store', () => {
  contract('in files', () =>
    Promise.resolve(new FileReportStore(path.join(tempDir('command-outputs'), 'runs'))),
  );

  describePostgres('in Postgres', (url) => {
    const schema = freshSchemaName('command_outputs');
    let stores: RunStores | undefined;
    beforeAll(async () => {
      await preparePostgres(url);
    });
    afterAll(async () => {
      await stores?.close();
      await dropSchema(url, schema);
    });
    contract('contract', () => {
      stores ??= openPostgresRunStores(url, { schema });
      return Promise.resolve(stores.reports);
    });
  });

  test('any call id makes a valid reference, and two ids that reduce alike stay apart', () => {
    const ids = ['call_1', 'call 1', 'call/1', '../..', '.', 'fc|abc:1', 'x'.repeat(500), 'é'];
    const refs = ids.map((id) => commandOutputRef('wf/run/coder-1', id));
    for (const ref of refs) {
      expect(checkRunRef(ref, 'report')).toBe(ref);
      expect(ref.startsWith('wf/run/coder-1/commands/')).toBe(true);
    }
    expect(new Set(refs).size).toBe(ids.length);
    expect(commandOutputRef('wf/run/coder-1', 'call_1')).toBe(commandOutputRef('wf/run/coder-1', 'call_1'));
  });
});
