/**
 * `aca run --repo` on a machine where no Temporal server answers at the default address: it
 * starts the local stack itself. It needs 127.0.0.1:7233 free and then holds it: no suite of
 * those running side by side uses that port, and test/sandbox/escape-limits.test.ts, which listens
 * there, runs alone before them (jest.config.js, runnerOptions.serial).
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import type { Scenario } from '../../src/llm/scenario';
import { isTemporalReachable } from '../../src/temporal/dev-server';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { makeRepo, removeFixtureRepos } from '../helpers/repo-fixtures';
import { runCli } from '../helpers/run-cli';
import { until } from '../helpers/until';

type Call = { name: string; arguments: Record<string, unknown> };
const step = (...calls: Call[]) => ({ tool_calls: calls });
const call = (name: string, args: Record<string, unknown>): Call => ({ name, arguments: args });

const scenarios: Scenario[] = [
  {
    name: 'repo-command',
    agents: {
      planner: [[step(call('submit_plan', { summary: 'Fix it', steps: ['fix'], files: [] }))]],
      coder: [
        [
          step(call('create_file', { path: 'status.txt', content: 'fixed\n' })),
          step(call('finish', { summary: 'fixed' })),
        ],
      ],
      tester: [[step(call('finish', { summary: 'nothing to add' }))]],
    },
  },
];

describe('aca run --repo . on a laptop with nothing running', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ scenarios });
  });
  afterAll(async () => {
    await h?.close();
    removeFixtureRepos();
  });

  test('brings up the local stack itself, says so in one line, and leaves the dev server up', async () => {
    // The default address must be free for this test to mean anything; the suite's own servers use other ports.
    expect(await isTemporalReachable('127.0.0.1:7233', 1000)).toBe(false);
    const repo = makeRepo({ 'status.txt': 'broken\n' });
    const home = path.join(h.home, 'laptop');
    const env: NodeJS.ProcessEnv = {
      ACA_HOME: home,
      OPENAI_BASE_URL: h.llm.url,
      OPENAI_API_KEY: 'sk-scripted',
      TEMPORAL_CLI: findTemporalCli() ?? '',
      ACA_UI_URL: 'http://127.0.0.1:8233',
    };
    const id = `repo-laptop-${randomBytes(3).toString('hex')}`;
    let pid: number | null = null;
    try {
      const r = await runCli(
        [
          'run',
          'Fix status.txt',
          '--repo',
          repo,
          '--test-cmd',
          'grep -q fixed status.txt',
          '--model',
          'scripted:repo-command',
          '--id',
          id,
        ],
        { ...env, TEMPORAL_ADDRESS: undefined, TEMPORAL_NAMESPACE: undefined, ACA_TASK_QUEUE: undefined },
      );
      pid = Number(/keeps running \(pid (\d+)\)/.exec(r.stderr)?.[1] ?? NaN) || null;
      expect(r.code).toBe(0);
      expect(r.stderr.match(/starting the local stack/g)).toHaveLength(1);
      expect(r.stdout).toContain('SUCCESS');
      expect(pid).not.toBeNull();
      expect(await isTemporalReachable('127.0.0.1:7233', 2000)).toBe(true);
      // With TEMPORAL_ADDRESS set, nothing is started: a closed port is an error (3), not a new server.
      const closed = await runCli(['run', 'Fix status.txt', '--repo', repo, '--test-cmd', 'true'], {
        ...env,
        TEMPORAL_ADDRESS: '127.0.0.1:1',
      });
      expect(closed.code).toBe(3);
      expect(closed.stderr).not.toContain('starting the local stack');
    } finally {
      if (pid) {
        process.kill(pid, 'SIGTERM');
        // Stopped, so that no later suite or run finds a server at 7233 that it did not start.
        await until(
          async () => !(await isTemporalReachable('127.0.0.1:7233', 500)),
          20_000,
          'the dev server to stop',
        );
      }
    }
  });
});
