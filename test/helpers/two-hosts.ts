/**
 * Two workers that share nothing but the Temporal server, one Postgres and the git store, as two
 * hosts would: each has its own ACA_HOME and workspaces root (and so task queues of its own for
 * the steps that need a run's files), and keeps no workflow state between steps
 * (ACA_CACHED_RUNS=0), so workflow tasks and model steps land on both. One worker is killed with
 * SIGKILL while the runs go on; the other adopts the runs it had from the store and finishes them.
 * Used by test/e2e/many-hosts.test.ts and test/slow/many-hosts-git-daemon.test.ts.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { RunResult } from '../../src/shared/run-types';
import { pauseSignal, resumeSignal } from '../../src/workflows/signals';
import type { Harness } from './agent-harness';
import { until } from './until';
import { spawnWorker, type WorkerProcess } from './worker-process';

export const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');
export const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** The 20 runs and the end each must reach. */
export const RUNS: Array<{ scenario: string; maxIterations: number; end: Partial<RunResult> }> = [
  ...Array.from({ length: 12 }, () => ({
    scenario: 'demo-fizzbuzz',
    maxIterations: 15,
    end: { state: 'SUCCESS' as const, iterations: 2 },
  })),
  ...Array.from({ length: 5 }, () => ({
    scenario: 'never-passes',
    maxIterations: 2,
    end: { state: 'FAILED' as const, reason: 'max_iterations' as const, iterations: 2 },
  })),
  // The scripted server answers the Coder's first call of this task with 500, twice.
  ...Array.from({ length: 3 }, () => ({
    scenario: 'fault-500',
    maxIterations: 15,
    end: { state: 'SUCCESS' as const },
  })),
];

export interface Host {
  name: string;
  home: string;
  workspaces: string;
  worker: WorkerProcess;
  identity: string;
}

/** How many times the run was adopted by another host. */
export async function adoptionsOf(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'adoptRun',
  ).length;
}

/** Every worker identity that started a step of the run: workflow tasks and activities. */
export async function identitiesOf(handle: WorkflowHandle): Promise<Set<string>> {
  const history = await handle.fetchHistory();
  const identities = new Set<string>();
  for (const event of history.events ?? []) {
    const identity =
      event.activityTaskStartedEventAttributes?.identity ??
      event.workflowTaskCompletedEventAttributes?.identity ??
      null;
    if (identity) identities.add(identity);
  }
  return identities;
}

/** Hosts started against `harness()`'s server and model; the caller kills them (see `hosts`). */
export function twoHosts(harness: () => Harness) {
  const hosts: Host[] = [];

  /** `env` over the host's own (a shorter ACA_HOST_START_TIMEOUT, say). */
  async function startHost(name: string, store: string, env: NodeJS.ProcessEnv = {}): Promise<Host> {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), `aca-host-${name}-`));
    const workspaces = path.join(home, 'workspaces');
    const worker = await spawnWorker({
      ...harness().cliEnv(),
      ACA_HOME: home,
      ACA_WORKSPACES: workspaces,
      DATABASE_URL,
      ACA_GIT_STORE: store,
      ACA_CACHED_RUNS: '0',
      // A dead host's runs move after this long (the default is a minute).
      ACA_HOST_START_TIMEOUT: '5',
      OPENAI_BASE_URL: harness().llm.url,
      ...env,
    });
    const host = { name, home, workspaces, worker, identity: `${worker.child.pid}@${os.hostname()}` };
    hosts.push(host);
    return host;
  }

  /**
   * Starts the 20 runs, waits until host A has run a step of each, kills A, and lets B finish
   * them; `midway` runs once every run is under way (a store fault, say).
   */
  async function twentyRunsAcrossHosts(store: string, midway?: () => Promise<void>): Promise<void> {
    // Both started before any run is, so starting them side by side changes nothing the runs see.
    const [a, b] = await Promise.all([startHost('a', store), startHost('b', store)]);
    const handles = await Promise.all(
      RUNS.map((run) => harness().start(run.scenario, { maxIterations: run.maxIterations })),
    );
    // Each run is paused as soon as host A has run a step of it, so that A dies mid-run in every
    // run it touched, however loaded the machine (a paused run starts no new step).
    const paused = new Set<number>();
    await until(
      async () => {
        for (const [i, handle] of handles.entries()) {
          if (paused.has(i)) continue;
          if (!(await identitiesOf(handle)).has(a.identity)) {
            if ((await handle.describe()).status.name !== 'RUNNING') return false;
            continue;
          }
          await handle.signal(pauseSignal).catch(() => undefined);
          paused.add(i);
        }
        return paused.size === handles.length;
      },
      180_000,
      'host A to run a step of every run',
    );
    const ended = await Promise.all(
      handles.map(async (hd) => (await hd.describe()).status.name !== 'RUNNING'),
    );
    // Killed mid-run: most runs have steps left, which B must take over from the store.
    expect(ended.filter((e) => !e).length).toBeGreaterThanOrEqual(15);
    await a.worker.kill('SIGKILL');
    for (const handle of handles) await handle.signal(resumeSignal).catch(() => undefined);
    if (midway) await midway();

    const results = await Promise.all(
      handles.map((handle) => harness().result(handle) as Promise<RunResult>),
    );
    for (const [i, result] of results.entries()) {
      expect(result).toMatchObject(RUNS[i]!.end);
      const identities = await identitiesOf(handles[i]!);
      expect(identities).toContain(a.identity);
      expect(identities).toContain(b.identity);
      // The store's branch is the run's last commit, and that commit has the run's files.
      const storeTip = execFileSync('git', ['ls-remote', store, `refs/heads/${result.branch}`], {
        encoding: 'utf8',
      }).split('\t')[0];
      expect(storeTip).toBe(result.headCommit);
    }
    // Host B adopted the runs A had, into paths of its own: every run still going when A died
    // ended in B's workspaces, never in A's paths.
    const adoptions = await Promise.all(handles.map(adoptionsOf));
    expect(adoptions.filter((n) => n > 0).length).toBeGreaterThan(0);
    for (const [i, result] of results.entries()) {
      if (ended[i]) continue;
      expect(result.place!.workTree.startsWith(`${b.workspaces}${path.sep}`)).toBe(true);
    }
    const successes = results.filter((r) => r.state === 'SUCCESS');
    expect(successes.length).toBe(15);
    for (const result of successes) {
      // The passing code is in the store, whichever host wrote it.
      const file = result.files.find((f) => f.endsWith('.py') && !f.startsWith('test'));
      expect(file).toBeDefined();
    }
  }

  return { hosts, startHost, twentyRunsAcrossHosts };
}
