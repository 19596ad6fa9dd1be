/**
 * An `aca eval` batch whose patches come from the agent, over two workers that share no folder
 * (test/helpers/two-hosts.ts: their own ACA_HOME and workspaces root), one SIGKILLed mid-run with
 * its home deleted, as a host lost with its disk: each host prepares the runs it takes in its own
 * copy of the repository, made from the git store, under its own workspaces root; the runs the
 * dead host had move to the other; the report lists every instance once.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { evalChildId, type EvalReport } from '../../src/shared/eval-types';
import { readRunResult } from '../../src/shared/run-failure';
import type { RunSnapshot } from '../../src/shared/run-types';
import { pauseSignal, resumeSignal, stateQuery } from '../../src/workflows/signals';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { goldScenario, makeEvalFixture, type EvalFixture } from '../helpers/eval-fixtures';
import { runCli } from '../helpers/run-cli';
import { adoptionsOf, DATABASE_URL, twoHosts } from '../helpers/two-hosts';
import { until } from '../helpers/until';

describe('aca eval with the agent over two hosts that share no folder', () => {
  let h: Harness;
  let fixture: EvalFixture;
  const { hosts, startHost } = twoHosts(() => h);

  beforeAll(async () => {
    fixture = makeEvalFixture();
    const scenarios = fixture.instances.map((i) =>
      goldScenario(
        i.instance_id,
        /Marker [\w-]+-task/.exec(i.problem_statement)![0],
        fixture.goldFiles.get(i.instance_id)!,
      ),
    );
    h = await createHarness({ scenarios });
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.worker.kill();
  });
  afterAll(async () => {
    await h?.close();
    if (fixture) fs.rmSync(fixture.root, { recursive: true, force: true });
  });

  test('host A SIGKILLed mid-run and its disk gone: its runs end on B, B prepares the next from its own copy, every instance is reported once', async () => {
    const store = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aca-store-')), 'store.git');
    execFileSync('git', ['init', '--quiet', '--bare', store]);
    // A run whose host is gone moves after 5 s, not the helper's 15 (a live host answers at once).
    const hostEnv = { ACA_HOST_START_TIMEOUT: '5' };
    const a = await startHost('a', store, hostEnv);
    // The command's host has a home and a workspaces root of its own, which no run may use.
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
    const batchId = `fx-hosts-agent-${randomBytes(4).toString('hex')}`;
    const ids = fixture.instances.map((i) => i.instance_id);
    // Three of the four instances start at once, on A (B is not up yet); the fourth once one ends.
    const started = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--model',
        'scripted',
        '--max-iterations',
        '1',
        '--concurrency',
        '3',
        '--id',
        batchId,
        '--detach',
      ],
      cli,
    );
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    // The copies the command made are gone: a run prepared from them would fail.
    fs.rmSync(path.join(cliHome, 'eval'), { recursive: true, force: true });

    const child = (id: string): WorkflowHandle => h.client.workflow.getHandle(evalChildId(batchId, id));
    const snapshotOf = (id: string) =>
      child(id)
        .query(stateQuery)
        .catch(() => null) as Promise<RunSnapshot | null>;
    const under = (dir: string, file: string) => file.startsWith(`${dir}${path.sep}`);
    // A run prepared on A (its work tree recorded under A's root), caught before its end.
    let onA: string | null = null;
    let onAGitDir = '';
    await until(
      async () => {
        for (const id of ids) {
          const snapshot = await snapshotOf(id);
          if (snapshot?.place && under(a.workspaces, snapshot.place.workTree)) {
            onA = id;
            onAGitDir = snapshot.place.commonDir;
          }
        }
        return onA !== null;
      },
      120_000,
      'host A to prepare a run',
    );
    // In A's own copy of the repository, made from the store: the command's copy is gone.
    expect(under(path.join(a.home, 'eval', 'repos'), onAGitDir)).toBe(true);
    // Paused (with its runs), the batch starts no step while A dies: the run is cut between two
    // steps, its next one left for a host that is gone.
    const batch = h.client.workflow.getHandle(batchId);
    await batch.signal(pauseSignal);
    const b = await startHost('b', store, hostEnv);
    await until(
      async () => {
        const described = await child(onA!).describe();
        if (described.status.name !== 'RUNNING')
          throw new Error(`the run on A ended ${described.status.name}`);
        const idle = (described.raw.pendingActivities ?? []).length === 0;
        return idle && (await snapshotOf(onA!))?.paused === true;
      },
      120_000,
      'the run on A to pause between two steps',
    );
    await a.worker.kill('SIGKILL');
    fs.rmSync(a.home, { recursive: true, force: true });
    await batch.signal(resumeSignal);

    const shown = await runCli(['eval', 'report', batchId, '--json'], cli, 600_000);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const report = JSON.parse(
      fs.readFileSync(path.join(cliHome, 'evals', batchId, 'report.json'), 'utf8'),
    ) as EvalReport;
    expect(report.total_instances).toBe(ids.length);
    expect([...report.submitted_ids].sort()).toEqual([...ids].sort());
    expect([...report.completed_ids, ...report.error_ids].sort()).toEqual([...ids].sort());
    expect(report.instances!.map((i) => i.instance_id).sort()).toEqual([...ids].sort());
    // The runs' patches reached the evaluations through the store, whichever host had them.
    expect(report.resolved_ids).toEqual(expect.arrayContaining(['acme__calc-add', 'acme__tsutil-sum']));

    // Every run reached the Planner and ended on B, in B's own folders: moved there from A (which
    // made its copy from the store), or prepared there in B's own copy.
    let preparedOnB = 0;
    for (const id of ids) {
      expect(h.llm.requests.some((r) => r.scenario === id && r.agent === 'planner')).toBe(true);
      const result = await readRunResult(child(id));
      expect(under(b.workspaces, result.place!.workTree)).toBe(true);
      if ((await adoptionsOf(child(id))) === 0) {
        preparedOnB += 1;
        expect(under(path.join(b.home, 'eval', 'repos'), result.place!.commonDir)).toBe(true);
      }
    }
    expect(await adoptionsOf(child(onA!))).toBeGreaterThan(0);
    expect(preparedOnB).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(cliHome, 'workspaces'))).toBe(false);
    expect(fs.existsSync(path.join(cliHome, 'eval'))).toBe(false);
  }, 600_000);
});
