/**
 * First-day commands end to end (the built command, a worker, the scripted model): ids a person
 * can type, `aca status`/`result` without an id, `aca clean`, and `aca doctor` while another
 * process holds the embedded database.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadBuiltinScenario } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { gitIn, makeRepo, removeFixtureRepos } from '../helpers/repo-fixtures';
import { runCli } from '../helpers/run-cli';

const TASK = loadBuiltinScenario('demo-fizzbuzz').task!;
const TYPABLE = /^[a-z0-9]+(-[a-z0-9]+){0,2}-[2-9a-hjkmnp-z]{5}$/;

describe('first-day commands', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;
  let elsewhere: string;

  beforeAll(async () => {
    h = await createHarness();
    await h.startWorker();
    env = h.cliEnv();
    elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-elsewhere-'));
  });
  afterAll(async () => {
    removeFixtureRepos();
    fs.rmSync(elsewhere, { recursive: true, force: true });
    await h?.close();
  });

  /** `aca run` of the demo task started inside `repo`, to its end; its result. */
  async function runIn(repo: string): Promise<RunResult> {
    const r = await runCli(['run', TASK, '--model', 'scripted:demo-fizzbuzz', '--json'], env, 300_000, repo);
    expect([r.code, r.stderr]).toEqual([0, expect.stringContaining('Working on the repository')]);
    return JSON.parse(r.stdout) as RunResult;
  }

  test('generated ids are short and typable; status and result without an id take the latest run started here; aca clean clears what is done with', async () => {
    const repo = makeRepo({ 'README.md': 'a project\n' });
    const applied = await runIn(repo);
    const kept = await runIn(repo);
    for (const id of [applied.workflowId, kept.workflowId]) {
      expect(id).toMatch(TYPABLE);
      expect(id.length).toBeLessThanOrEqual(26);
    }
    expect(applied.workflowId).not.toBe(kept.workflowId);

    // Without an id: the latest run started from this repository, from any folder of it.
    fs.mkdirSync(path.join(repo, 'sub'));
    const status = await runCli(['status'], env, 60_000, path.join(repo, 'sub'));
    expect(status.code).toBe(0);
    expect(status.stdout.split('\n')[0]).toBe(`${kept.workflowId}: SUCCESS`);
    expect(status.stderr).toContain(`aca: the latest run started here: ${kept.workflowId}`);
    const result = await runCli(['result', '--json'], env, 60_000, repo);
    expect((JSON.parse(result.stdout) as RunResult).workflowId).toBe(kept.workflowId);
    // From a folder no run was started from: the latest run of this ACA_HOME, said so.
    const away = await runCli(['status'], env, 60_000, elsewhere);
    expect(away.stdout.split('\n')[0]).toBe(`${kept.workflowId}: SUCCESS`);
    expect(away.stderr).toContain('no run was started here; the latest run started with ACA_HOME');
    // A home that started nothing: bad input, one line.
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-fresh-home-'));
    const none = await runCli(['status'], { ...env, ACA_HOME: fresh }, 60_000, elsewhere);
    fs.rmSync(fresh, { recursive: true, force: true });
    expect([none.code, none.stderr.trim()]).toEqual([
      2,
      expect.stringMatching(/^aca: no run was started with ACA_HOME .*; give a run id/),
    ]);

    expect((await runCli(['apply', applied.workflowId], env, 60_000, repo)).code).toBe(0);
    const going = await runCli(
      [
        'run',
        TASK,
        '--model',
        'scripted:never-passes',
        '--on-limit',
        'ask',
        '--max-iterations',
        '1',
        '--detach',
      ],
      env,
      60_000,
      repo,
    );
    expect(going.code).toBe(0);
    const goingId = going.stdout.trim();
    try {
      const listed = await runCli(['clean'], env, 120_000, repo);
      expect(listed.code).toBe(0);
      const lines = listed.stdout.split('\n');
      expect(lines).toContain(
        `would remove ${applied.workflowId} (applied): worktree ${applied.workspace}, branch aca/${applied.workflowId}`,
      );
      expect(lines).toContain(
        `keep    ${kept.workflowId}: changes never applied (aca apply, or --never-applied)`,
      );
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^keep    ${goingId}: still going`)));
      // Listing removes nothing.
      expect(fs.existsSync(applied.workspace)).toBe(true);

      const removed = await runCli(['clean', '--yes'], env, 120_000, repo);
      expect(removed.code).toBe(0);
      expect(removed.stdout).toContain(`removed ${applied.workflowId} (applied)`);
      expect(fs.existsSync(applied.workspace)).toBe(false);
      expect(gitIn(repo, 'branch', '--list', `aca/${applied.workflowId}`).trim()).toBe('');
      expect(fs.existsSync(kept.workspace)).toBe(true);
      expect(gitIn(repo, 'branch', '--list', `aca/${kept.workflowId}`).trim()).not.toBe('');
      expect((await h.client.workflow.getHandle(goingId).describe()).status.name).toBe('RUNNING');
    } finally {
      await h.client.workflow
        .getHandle(goingId)
        .terminate('test over')
        .catch(() => undefined);
    }
  });

  test('a mistyped command gets a suggestion', async () => {
    const r = await runCli(['stauts'], env, 60_000, elsewhere);
    expect([r.code, r.stderr.trim()]).toEqual([2, "aca: unknown command 'stauts'; did you mean status?"]);
  });

  test('aca doctor passes while another process holds the embedded database', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-held-home-'));
    const holder = spawn('sleep', ['120'], { stdio: 'ignore' });
    try {
      const dataDir = path.join(home, 'memory');
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(
        path.join(dataDir, 'aca-memory.lock'),
        JSON.stringify({ pid: holder.pid, startedAt: new Date().toISOString() }),
      );
      const { DATABASE_URL: _unset, ...rest } = process.env;
      const doctor = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [path.resolve(__dirname, '../../bin/aca.js'), 'doctor', '--json'],
          {
            cwd: elsewhere,
            env: { ...rest, ...env, ACA_HOME: home },
            stdio: ['ignore', 'pipe', 'ignore'],
          },
        );
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.on('close', (code) => resolve({ code, stdout }));
      });
      const checks = (
        JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }
      ).checks;
      expect(checks.find((c) => c.name === 'database')).toEqual({
        name: 'database',
        status: 'ok',
        detail: expect.stringContaining(`in use by process ${holder.pid}`),
      });
    } finally {
      holder.kill('SIGKILL');
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
