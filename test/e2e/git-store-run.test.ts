/**
 * A whole run against the git store, on the real workflow and worker: with ACA_GIT_STORE set the
 * run's branch in the store ends at the run's last commit, holding every attempt's commit; with
 * the default store (this host's ACA_HOME) nothing is pushed and no store is made.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getFreePort } from '../../src/temporal/dev-server';
import { createHarness, type Harness } from '../helpers/agent-harness';

const git = (gitDir: string, ...args: string[]): string =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8' }).trim();

describe('a run and the git store', () => {
  const harnesses: Harness[] = [];
  afterAll(async () => {
    for (const h of harnesses) await h.close();
  });

  test('with ACA_GIT_STORE set, the store holds the run branch at its last commit, with every attempt', async () => {
    const storeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-store-'));
    const store = path.join(storeRoot, 'shared.git');
    execFileSync('git', ['init', '--quiet', '--bare', store]);
    const h = await createHarness({ env: { ACA_GIT_STORE: store } });
    harnesses.push(h);
    await h.startWorker();
    const result = await h.result(await h.start('demo-fizzbuzz'));
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    expect(git(store, 'rev-parse', `refs/heads/${result.branch}`)).toBe(result.headCommit);
    for (const attempt of result.attempts) {
      expect(git(store, 'merge-base', '--is-ancestor', attempt.commit, result.headCommit!)).toBe('');
    }
    expect(git(store, 'rev-list', '--max-parents=0', result.headCommit!)).toBe(result.baseCommit);
    // The store's commit holds the files the run ended with.
    expect(git(store, 'show', `${result.headCommit}:fizzbuzz.py`)).toBe(
      fs.readFileSync(path.join(result.workspace, 'fizzbuzz.py'), 'utf8').trim(),
    );
    fs.rmSync(storeRoot, { recursive: true, force: true });
  }, 120_000);

  test('a store that cannot be reached: the step is retried, then the run ends FAILED error naming the store', async () => {
    // Nothing listens on this port: every push is refused at once.
    const url = `git://127.0.0.1:${await getFreePort()}/aca.git`;
    const h = await createHarness({ env: { ACA_GIT_STORE: url } });
    harnesses.push(h);
    await h.startWorker();
    const handle = await h.start('demo-fizzbuzz');
    const result = await h.result(handle);
    expect(result).toMatchObject({ state: 'FAILED', reason: 'error' });
    expect(result.error).toContain(`the git store ${url} cannot be reached`);
    const history = await handle.fetchHistory();
    const failed = (history.events ?? []).filter((e) => e.activityTaskFailedEventAttributes);
    expect(failed).toHaveLength(1);
    const started = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes);
    // prepareRun's three attempts, the last one failing.
    expect(started.some((e) => e.activityTaskStartedEventAttributes!.attempt === 3)).toBe(true);
  }, 120_000);

  test('with the default store, a run on one host pushes nothing and makes no store', async () => {
    const h = await createHarness({ env: { ACA_GIT_STORE: '' } });
    harnesses.push(h);
    await h.startWorker();
    const result = await h.result(await h.start('demo-fizzbuzz'));
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    expect(h.config.gitStore.isDefault).toBe(true);
    expect(fs.existsSync(h.config.gitStore.url)).toBe(false);
  }, 120_000);
});
