/**
 * The 20 runs of test/e2e/many-hosts.test.ts across two hosts, one killed, with the git store
 * behind a git daemon that goes down for five seconds mid-run. Minutes long; in `npm test` the same
 * runs with a store at a path (test/e2e/many-hosts.test.ts) check the two hosts and the adoption,
 * test/unit/repo/git/git-store.test.ts the git:// store, and test/e2e/git-store-run.test.ts a store that
 * cannot be reached (the step retried, then the run ended naming it).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarios } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { startGitDaemon, type GitDaemon } from '../helpers/git-daemon';
import { TEST_SCENARIOS, twoHosts } from '../helpers/two-hosts';

describe('workers on two hosts sharing only Temporal, Postgres and a git store behind git://', () => {
  let h: Harness;
  const { hosts, twentyRunsAcrossHosts } = twoHosts(() => h);
  let daemon: GitDaemon | null = null;

  beforeAll(async () => {
    h = await createHarness({ scenarios: [...loadScenarios(), ...loadScenarios(TEST_SCENARIOS)] });
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.worker.kill();
    await daemon?.stop();
    daemon = null;
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a store behind git://127.0.0.1, down for a while mid-run: 20 runs end as expected on both hosts', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-store-daemon-'));
    execFileSync('git', ['init', '--quiet', '--bare', path.join(root, 'store.git')]);
    daemon = await startGitDaemon(root);
    const url = daemon.url('store.git');
    const port = daemon.port;
    await twentyRunsAcrossHosts(url, async () => {
      // The store goes away for five seconds: steps that reach it fail and are retried.
      await daemon!.stop();
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      daemon = await startGitDaemon(root, undefined, port);
    });
  }, 600_000);
});
