/**
 * `aca demo --port --ui-port` and then `aca run --repo` on a machine where nothing answers at the
 * address the demo's server had: `aca run` starts the local stack itself, on the ports the demo
 * was given, and every printed link goes to that server's Web UI. The ports are free ones chosen
 * here, so the suite runs beside a user's own `aca up` or `aca demo` on 7233 and 8233.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import type { Scenario } from '../../src/llm/scenario';
import { getFreePort, isTemporalReachable } from '../../src/temporal/dev-server';
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

describe('aca demo on ports of its own, then aca run --repo . with nothing running', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ scenarios });
  });
  afterAll(async () => {
    await h?.close();
    removeFixtureRepos();
  });

  /** Stops the dev server a command left running, so that no later suite finds it. */
  async function stopServer(pid: number | null, address: string): Promise<void> {
    if (!pid) return;
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    await until(async () => !(await isTemporalReachable(address, 500)), 20_000, 'the dev server to stop');
  }

  test('the demo serves and links the ports it was given; aca run brings the stack up there again, says so in one line', async () => {
    const port = await getFreePort();
    const uiPort = await getFreePort();
    const address = `127.0.0.1:${port}`;
    const home = path.join(h.home, 'laptop');
    const env: NodeJS.ProcessEnv = {
      ACA_HOME: home,
      OPENAI_BASE_URL: h.llm.url,
      OPENAI_API_KEY: 'sk-scripted',
      TEMPORAL_CLI: findTemporalCli() ?? '',
      TEMPORAL_ADDRESS: undefined,
      TEMPORAL_NAMESPACE: undefined,
      ACA_TASK_QUEUE: undefined,
      ACA_UI_URL: undefined,
      DATABASE_URL: '',
    };
    const ui = `http://localhost:${uiPort}/namespaces/default/workflows/`;
    const serverPid = (stderr: string) => Number(/\(pid (\d+)\)/.exec(stderr)?.[1] ?? NaN) || null;
    let pid: number | null = null;
    try {
      const demo = await runCli(['demo', '--port', String(port), '--ui-port', String(uiPort)], env);
      pid = serverPid(demo.stderr);
      expect(demo.code).toBe(0);
      expect(demo.stderr).toContain(`Starting the Temporal dev server on ${address}`);
      expect(demo.stderr).toContain(`Follow it in the Web UI: ${ui}aca-demo-`);
      expect(demo.stdout).toContain(`web UI:    ${ui}aca-demo-`);
      expect(`${demo.stdout}${demo.stderr}`).not.toContain(':8233');
      // The Web UI is really there, on the port given.
      expect((await fetch(`http://127.0.0.1:${uiPort}/`)).ok).toBe(true);
      await stopServer(pid, address);
      pid = null;

      const repo = makeRepo({ 'status.txt': 'broken\n' });
      const id = `repo-laptop-${randomBytes(3).toString('hex')}`;
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
        env,
      );
      pid = serverPid(r.stderr);
      expect(r.code).toBe(0);
      expect(r.stderr.match(/starting the local stack/g)).toHaveLength(1);
      expect(r.stderr).toContain(`No Temporal server answers at ${address}`);
      expect(r.stdout).toContain('SUCCESS');
      expect(`${r.stdout}${r.stderr}`).toContain(`${ui}${id}`);
      expect(`${r.stdout}${r.stderr}`).not.toContain(':8233');
      expect(pid).not.toBeNull();
      expect(await isTemporalReachable(address, 2000)).toBe(true);
      // With TEMPORAL_ADDRESS set, nothing is started: a closed port is an error (3), not a new server.
      const closed = await runCli(['run', 'Fix status.txt', '--repo', repo, '--test-cmd', 'true'], {
        ...env,
        TEMPORAL_ADDRESS: '127.0.0.1:1',
      });
      expect(closed.code).toBe(3);
      expect(closed.stderr).not.toContain('starting the local stack');
    } finally {
      await stopServer(pid, address);
    }
  });

  test('a port that is not one is bad input, and nothing is started', async () => {
    const r = await runCli(['up', '--ui-port', '99999'], { ACA_HOME: path.join(h.home, 'bad-port') });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--ui-port must be a port number from 1 to 65535, got "99999"');
  });
});
