/**
 * An `aca eval` batch over two workers that share no folder, only Temporal, Postgres and the git
 * store (test/helpers/two-hosts.ts), one of them SIGKILLed mid-batch: the batch's instances and
 * results are in Postgres, each host makes its own repository copy from the store, and the report
 * lists every instance exactly once.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EvalReport } from '../../src/shared/eval-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { makeEvalFixture, type EvalFixture } from '../helpers/eval-fixtures';
import { runCli } from '../helpers/run-cli';
import { DATABASE_URL, twoHosts } from '../helpers/two-hosts';
import { until } from '../helpers/until';

describe('aca eval over two hosts that share no folder', () => {
  let h: Harness;
  let fixture: EvalFixture;
  const { hosts, startHost } = twoHosts(() => h);

  beforeAll(async () => {
    fixture = makeEvalFixture();
    h = await createHarness();
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.worker.kill();
  });
  afterAll(async () => {
    await h?.close();
    if (fixture) fs.rmSync(fixture.root, { recursive: true, force: true });
  });

  test('one host SIGKILLed mid-batch: the report lists every instance exactly once', async () => {
    const store = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aca-store-')), 'store.git');
    execFileSync('git', ['init', '--quiet', '--bare', store]);
    const a = await startHost('a', store);
    const b = await startHost('b', store);
    // The command's host: a home of its own too, whose repository copies vanish once the batch starts.
    const cliHome = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-eval-cli-'));
    const cli = {
      ...h.cliEnv(),
      ACA_HOME: cliHome,
      ACA_WORKSPACES: path.join(cliHome, 'workspaces'),
      DATABASE_URL,
      ACA_GIT_STORE: store,
      // An evaluation left on the dead host's queue is offered to another after 30 s.
      ACA_HOST_START_TIMEOUT: '3',
      ACA_HEARTBEAT_TIMEOUT: '5',
    };
    const batchId = `fx-hosts-${process.pid}`;
    const ids = fixture.instances.map((i) => i.instance_id);
    const started = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--predictions',
        'gold',
        '--concurrency',
        '2',
        '--id',
        batchId,
        '--detach',
      ],
      cli,
    );
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    fs.rmSync(path.join(cliHome, 'eval'), { recursive: true, force: true });

    // Host A is evaluating once it has made its own copy of a repository from the store.
    await until(
      () => fs.existsSync(path.join(a.home, 'eval', 'repos')),
      120_000,
      'host A to copy a repository from the store',
    );
    await a.worker.kill('SIGKILL');
    expect((await h.client.workflow.getHandle(batchId).describe()).status.name).toBe('RUNNING');

    const shown = await runCli(['eval', 'report', batchId, '--json'], cli, 600_000);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const report = JSON.parse(shown.stdout) as EvalReport;
    expect(report.total_instances).toBe(ids.length);
    expect([...report.submitted_ids].sort()).toEqual([...ids].sort());
    const ended = [...report.completed_ids, ...report.error_ids];
    expect(ended.sort()).toEqual([...ids].sort());
    expect(report.instances!.map((i) => i.instance_id).sort()).toEqual([...ids].sort());
    // The gold patches resolve; the instance whose tests outlive their time limit does not.
    expect(report.resolved_ids).toEqual(expect.arrayContaining(['acme__calc-add', 'acme__tsutil-sum']));
    // B made its own copy: nothing came through a shared folder.
    expect(fs.readdirSync(path.join(b.home, 'eval', 'repos')).length).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(cliHome, 'eval'))).toBe(false);
    // report.json and predictions.jsonl on the command's host, from the database.
    const predictions = fs
      .readFileSync(path.join(cliHome, 'evals', batchId, 'predictions.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(predictions.map((l) => (JSON.parse(l) as { instance_id: string }).instance_id).sort()).toEqual(
      [...ids].sort(),
    );
  }, 600_000);
});
