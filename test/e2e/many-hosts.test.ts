/**
 * Two workers that share nothing but the Temporal server, one Postgres and the git store, as two
 * hosts would (see test/helpers/two-hosts.ts). The same 20 runs with the store behind a git
 * daemon that goes down mid-run: test/slow/many-hosts-git-daemon.test.ts.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarios } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { runCli } from '../helpers/run-cli';
import { DATABASE_URL, identitiesOf, TEST_SCENARIOS, twoHosts } from '../helpers/two-hosts';

describe('workers on two hosts sharing only Temporal, Postgres and the git store', () => {
  let h: Harness;
  const { hosts, startHost, twentyRunsAcrossHosts } = twoHosts(() => h);

  beforeAll(async () => {
    h = await createHarness({ scenarios: [...loadScenarios(), ...loadScenarios(TEST_SCENARIOS)] });
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.worker.kill();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a store at a path: 20 runs end as expected, each with steps on both hosts, one host killed', async () => {
    const store = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aca-store-')), 'store.git');
    execFileSync('git', ['init', '--quiet', '--bare', store]);
    await twentyRunsAcrossHosts(store);
  }, 600_000);

  test("with the run's disk gone, aca diff reads the store and a fork is prepared on a host that never held the run", async () => {
    const store = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'aca-store-')), 'store.git');
    execFileSync('git', ['init', '--quiet', '--bare', store]);
    const a = await startHost('a', store);
    const original = await h.result(await h.start('demo-fizzbuzz'));
    expect(original).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    const expectedDiff = execFileSync(
      'git',
      ['--git-dir', original.place!.commonDir, 'diff', original.baseCommit!, original.headCommit!, '--stat'],
      { encoding: 'utf8' },
    );
    expect(expectedDiff).toContain('fizzbuzz.py');
    // Host A and the run's folders on its disk are gone; host B never saw the run.
    await a.worker.kill('SIGKILL');
    fs.rmSync(original.place!.commonDir, { recursive: true, force: true });
    fs.rmSync(original.workspace, { recursive: true, force: true });
    fs.rmSync(a.home, { recursive: true, force: true });
    const b = await startHost('b', store);
    const client = { ...h.cliEnv(), ACA_GIT_STORE: store, DATABASE_URL };
    const diff = await runCli(['diff', original.workflowId, '--stat'], client);
    expect(diff.stderr).toBe('');
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('fizzbuzz.py');
    const forkId = `fork-${original.workflowId}`;
    const fork = await runCli(['fork', original.workflowId, '--at', '2', '--id', forkId, '--json'], client);
    expect(fork.stderr).not.toMatch(/error/i);
    const forked = JSON.parse(fork.stdout) as RunResult;
    expect(forked).toMatchObject({ state: 'SUCCESS', parentRun: original.workflowId });
    const attempt1 = original.attempts.find((at) => at.iteration === 1)!.commit;
    const first = forked.attempts[0]!.commit;
    // The fork's branch grows from the original's attempt 1, which B could only get from the store.
    expect(
      execFileSync('git', ['--git-dir', store, 'merge-base', '--is-ancestor', attempt1, first], {
        encoding: 'utf8',
      }),
    ).toBe('');
    expect(await identitiesOf(h.client.workflow.getHandle(forkId))).toEqual(new Set([b.identity]));
  }, 300_000);
});
