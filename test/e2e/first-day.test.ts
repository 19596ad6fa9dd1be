/**
 * What `aca run` and the linked-run commands decide before anything starts: an id already taken
 * is never reused silently, a run started inside a checkout works on it (and one started in a
 * folder of files outside git is refused), the task may come from standard input or a file and
 * has a size limit, a linked run may change its model and limits, and a task queue nobody polls
 * is named instead of waited on in silence. And what is left of a run Temporal terminated.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decodePayload } from '../../src/api/history-payloads';
import type { RunInput, RunResult, RunSnapshot } from '../../src/shared/run-types';
import { loadBuiltinScenario, loadScenarios } from '../../src/llm/scenario';
import { stateQuery } from '../../src/workflows/signals';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { makeRepo, removeFixtureRepos } from '../helpers/repo-fixtures';
import { ACA_BIN, demoRunArgs, emptyCwd, runCli } from '../helpers/run-cli';
import { THREAD_SUITE } from '../helpers/thread-suite';
import { until } from '../helpers/until';
import { spawnWorker } from '../helpers/worker-process';

const FIZZBUZZ_TASK = loadBuiltinScenario('demo-fizzbuzz').task!;

describe('run ids, repositories found from the folder, linked-run settings, unpolled queues', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;
  const newId = (label: string) => `ids-${label}-${randomBytes(3).toString('hex')}`;
  const fizzbuzz = demoRunArgs;
  const inputOf = async (id: string): Promise<RunInput> => {
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    return decodePayload(started?.input?.payloads?.[0]) as RunInput;
  };
  const firstRunId = async (id: string) => (await h.client.workflow.getHandle(id).describe()).runId;

  beforeAll(async () => {
    h = await createHarness({ scenarios: loadScenarios() });
    await h.startWorker();
    env = h.cliEnv();
  });
  afterAll(async () => {
    removeFixtureRepos();
    await h?.close();
  });

  let ended: { id: string; result: RunResult } | undefined;

  test('--id of an ended run is refused (exit 2, nothing started); --replace discards it, says so, and starts anew', async () => {
    const id = newId('reuse');
    const first = await runCli(fizzbuzz(id, '--json'), env);
    expect(first.code).toBe(0);
    const firstResult = JSON.parse(first.stdout) as RunResult;
    const before = await firstRunId(id);

    const again = await runCli(fizzbuzz(id), env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`a run with id ${id} exists (ended SUCCESS)`);
    expect(again.stderr).toContain('--replace');
    expect(await firstRunId(id)).toBe(before);
    expect(fs.existsSync(firstResult.workspace)).toBe(true);

    const replaced = await runCli(fizzbuzz(id, '--replace', '--json'), env);
    expect(replaced.code).toBe(0);
    expect(replaced.stderr).toMatch(
      new RegExp(`replacing run ${id} \\(ended SUCCESS\\): discarded its work tree \\S+${id}`),
    );
    expect(await firstRunId(id)).not.toBe(before);
    ended = { id, result: JSON.parse(replaced.stdout) as RunResult };
  });

  test('a linked run with --id of a run still going is refused even with --replace', async () => {
    const going = newId('going');
    const started = await runCli(fizzbuzz(going, '--detach'), env);
    expect(started.code).toBe(0);
    try {
      const clash = await runCli(fizzbuzz(going, '--replace'), env);
      expect(clash.code).toBe(2);
      expect(clash.stderr).toContain(`run ${going} is still going`);
    } finally {
      await h.client.workflow
        .getHandle(going)
        .terminate('test over')
        .catch(() => undefined);
    }
  });

  test('fork takes --model, --max-iterations, --max-cost and --on-limit; retry refuses a bad --on-limit', async () => {
    expect(ended).toBeDefined();
    const fork = newId('fork');
    const r = await runCli(
      [
        'fork',
        ended!.id,
        '--at',
        '2',
        '--id',
        fork,
        '--model',
        'scripted:never-passes',
        '--max-iterations',
        '3',
        '--on-limit',
        'ask',
        '--detach',
      ],
      env,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    try {
      const input = await inputOf(fork);
      expect(input.model).toBe('scripted:never-passes');
      // Attempts are numbered on from the parent's: the fork starts at 2 and may make 3.
      expect(input.options.maxIterations).toBe(4);
      expect(input.options.onLimit).toBe('ask');
      expect(input.link).toMatchObject({ kind: 'fork', parentRun: ended!.id, attemptsBefore: 1 });
    } finally {
      await h.client.workflow
        .getHandle(fork)
        .terminate('test over')
        .catch(() => undefined);
    }
    const priced = await runCli(['fork', ended!.id, '--at', '1', '--max-cost', '1', '--detach'], env);
    expect(priced.code).toBe(2);
    expect(priced.stderr).toContain('--max-cost needs the price of model');
    const bad = await runCli(['continue', ended!.id, 'more', '--on-limit', 'later'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--on-limit must be "fail" or "ask"');
  });

  test('started inside a git work tree, aca run works on that repository and says so; --no-repo does not', async () => {
    const repo = makeRepo({ 'fizzbuzz.py': 'def fizzbuzz(n):\n    return str(n)\n' });
    const nested = `${repo}/pkg`;
    fs.mkdirSync(nested);
    const inside = newId('inside');
    const r = await runCli(fizzbuzz(inside, '--detach'), env, 120_000, nested);
    try {
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`Working on the repository at ${fs.realpathSync(repo)}`);
      expect((await inputOf(inside)).repo?.path).toBe(fs.realpathSync(repo));
    } finally {
      await h.client.workflow
        .getHandle(inside)
        .terminate('test over')
        .catch(() => undefined);
    }
    const fresh = newId('norepo');
    const n = await runCli(fizzbuzz(fresh, '--no-repo', '--detach'), env, 120_000, nested);
    try {
      expect(n.code).toBe(0);
      expect(n.stderr).not.toContain('Working on the repository');
      expect((await inputOf(fresh)).repo).toBeNull();
    } finally {
      await h.client.workflow
        .getHandle(fresh)
        .terminate('test over')
        .catch(() => undefined);
    }
  });

  test("a worker's log: one line per entry, a few dozen lines for a whole run", async () => {
    const queue = `own-worker-${randomBytes(3).toString('hex')}`;
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-own-worker-'));
    const own = { ...env, ACA_HOME: home, ACA_TASK_QUEUE: queue, OPENAI_BASE_URL: h.llm.url };
    const worker = await spawnWorker(own);
    try {
      const before = worker.output().split('\n').length;
      const r = await runCli(fizzbuzz(newId('logged')), own);
      expect(r.code).toBe(0);
      const lines = worker
        .output()
        .split('\n')
        .slice(before - 1)
        .filter(Boolean);
      // Every line is an entry of its own (a time first), none a piece of a spread-out object.
      for (const line of lines)
        expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z (TRACE|DEBUG|INFO |WARN |ERROR) /);
      expect(lines.length).toBeLessThan(40);
    } finally {
      await worker.kill('SIGTERM');
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  test('a suite that cannot start (a missing runner) stops before any model call: exit 1, reason environment, no lesson', async () => {
    const repo = makeRepo({
      'calc.py': 'def add(a, b):\n    return a - b\n',
      'tests/test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
    });
    const id = newId('no-runner');
    const asked = h.llm.requests.length;
    const r = await runCli(
      [
        'run',
        'Fix add in calc.py',
        '--repo',
        repo,
        '--test-cmd',
        'nosuchrunner --all',
        '--id',
        id,
        '--model',
        'scripted:demo-fizzbuzz',
        '--json',
      ],
      env,
    );
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(result).toMatchObject({ state: 'FAILED', reason: 'environment', iterations: 0 });
    expect(result.error).toContain(
      'the tests cannot run on the base commit: the test command could not start (command not found, exit 127)',
    );
    expect(result.error).toContain('command: nosuchrunner --all');
    expect(result.error).toContain('nosuchrunner: not found');
    expect(h.llm.requests.length).toBe(asked);
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((name): name is string => Boolean(name));
    expect(scheduled).toContain('runTests');
    expect(scheduled.filter((name) => /^remember|^agentStep|^recall/.test(name))).toEqual([]);
  });

  test('a legitimate suite that starts many threads runs with the default limits, at the baseline and after', async () => {
    const threads = THREAD_SUITE;
    const repo = makeRepo({ 'tests/test_threads.py': threads, 'README.md': 'a project\n' });
    const r = await runCli([...fizzbuzz(newId('threads')), '--repo', repo, '--json'], env);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(result).toMatchObject({ state: 'SUCCESS', baseline: { passed: 1, failed: 0 }, regressions: [] });
    expect(r.code).toBe(0);
  });

  test('--memory and --wall-time outside what a worker allows are bad input', async () => {
    const low = await runCli(['run', 'x', '--no-repo', '--memory', '100'], env);
    expect([low.code, low.stderr]).toEqual([2, expect.stringContaining('--memory must be from 256 MiB')]);
    const long = await runCli(['run', 'x', '--no-repo', '--wall-time', '999999'], env);
    expect([long.code, long.stderr]).toEqual([2, expect.stringContaining('--wall-time must be at most')]);
  });

  test('--language that does not fit the repository: exit 2 before anything starts', async () => {
    const repo = makeRepo({ 'calc.py': 'def add(a, b):\n    return a - b\n' });
    const id = newId('language');
    const r = await runCli(['run', 'fix add', '--repo', repo, '--language', 'typescript', '--id', id], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--language typescript does not fit the repository');
    await expect(h.client.workflow.getHandle(id).describe()).rejects.toThrow(/not found/i);
  });

  test('a task queue nobody polls: aca run names it within 10 s, aca status exits 3 naming it, aca doctor warns', async () => {
    const queue = `nobody-polls-${randomBytes(3).toString('hex')}`;
    const id = newId('unpolled');
    const lonely = { ...env, ACA_TASK_QUEUE: queue };
    const child = spawn(process.execPath, [ACA_BIN, ...fizzbuzz(id)], {
      cwd: emptyCwd(),
      env: { ...process.env, ...lonely },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const started = Date.now();
    try {
      await until(() => stderr.includes(`no worker is polling ${queue}`), 10_000, 'the no-worker line');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(stderr).toContain('aca worker');
      const status = await runCli(['status', id], lonely, 60_000);
      expect(status.stderr).toContain(`no worker is polling ${queue}`);
      expect(status.code).toBe(3);
      const doctor = await runCli(['doctor', '--json'], lonely, 60_000);
      const checks = (
        JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }
      ).checks;
      expect(checks.find((c) => c.name === 'workers')).toMatchObject({
        status: 'warn',
        detail: expect.stringContaining(queue),
      });
      const polled = await runCli(['doctor', '--json'], env, 60_000);
      const worker = (
        JSON.parse(polled.stdout) as { checks: Array<{ name: string; status: string }> }
      ).checks.find((c) => c.name === 'workers');
      expect(worker?.status).toBe('ok');
      // Ctrl-C is not held up by a query no worker will answer: the run is paused, exit 4, at once.
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const interrupted = Date.now();
      child.kill('SIGINT');
      const code = await exited;
      expect([code, stderr]).toEqual([4, expect.not.stringContaining('Error')]);
      expect(Date.now() - interrupted).toBeLessThan(5_000);
      expect(stderr).toContain(`Paused ${id}`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await h.client.workflow
        .getHandle(id)
        .terminate('test over')
        .catch(() => undefined);
    }
  });
  test('where a run works: a folder with files outside git is refused with how to go on; an empty folder or --no-repo gets a fresh workspace', async () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-no-git-'));
    fs.writeFileSync(path.join(project, 'stats.py'), 'def mean(xs):\n    return sum(xs) / len(xs)\n');
    const refused = newId('nogit');
    try {
      const r = await runCli(['run', 'fix mean()', '--id', refused], env, 60_000, project);
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^aca: .* holds files but is not a git work tree/);
      expect(lines[0]).toContain('git init');
      expect(lines[0]).toContain('--no-repo');
      await expect(h.client.workflow.getHandle(refused).describe()).rejects.toThrow(/not found/i);
      expect(fs.readdirSync(project)).toEqual(['stats.py']);

      const chosen = newId('chosen-fresh');
      const fresh = await runCli(fizzbuzz(chosen, '--no-repo', '--detach'), env, 120_000, project);
      expect(fresh.code).toBe(0);
      expect((await inputOf(chosen)).repo).toBeNull();
      await h.client.workflow.getHandle(chosen).terminate('test over');

      const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-empty-'));
      const blank = newId('empty');
      const inEmpty = await runCli(fizzbuzz(blank, '--detach'), env, 120_000, empty);
      expect(inEmpty.code).toBe(0);
      expect(inEmpty.stderr).not.toContain('Working on the repository');
      expect((await inputOf(blank)).repo).toBeNull();
      await h.client.workflow.getHandle(blank).terminate('test over');
      fs.rmSync(empty, { recursive: true, force: true });
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });

  test('the task from standard input (aca run -) or --task-file, whole; over 64 KiB it is refused before anything starts', async () => {
    const task = `${FIZZBUZZ_TASK}\n\nDetails:\n  - keep "quotes" and $dollars as they are\n`;
    const piped = newId('stdin');
    const fromStdin = await runCli(
      ['run', '-', '--model', 'scripted:demo-fizzbuzz', '--id', piped, '--detach'],
      env,
      120_000,
      undefined,
      task,
    );
    expect(fromStdin.code).toBe(0);
    expect((await inputOf(piped)).task).toBe(task.trim());
    await h.client.workflow.getHandle(piped).terminate('test over');

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-task-file-'));
    try {
      const file = path.join(dir, 'task.md');
      fs.writeFileSync(file, task);
      const filed = newId('file');
      const fromFile = await runCli(
        ['run', '--task-file', file, '--model', 'scripted:demo-fizzbuzz', '--id', filed, '--detach'],
        env,
      );
      expect(fromFile.code).toBe(0);
      expect((await inputOf(filed)).task).toBe(task.trim());
      await h.client.workflow.getHandle(filed).terminate('test over');

      const big = path.join(dir, 'big.md');
      fs.writeFileSync(big, 'x'.repeat(64 * 1024 + 1));
      const tooBig: Array<[string, Promise<{ code: number | null; stderr: string }>]> = [];
      const id = (label: string) => newId(`big-${label}`);
      const ids = { file: id('file'), stdin: id('stdin'), arg: id('arg') };
      tooBig.push(['file', runCli(['run', '--task-file', big, '--id', ids.file], env)]);
      tooBig.push([
        'stdin',
        runCli(['run', '-', '--id', ids.stdin], env, 60_000, undefined, 'y'.repeat(1024 * 1024)),
      ]);
      tooBig.push(['arg', runCli(['run', 'z'.repeat(64 * 1024 + 1), '--id', ids.arg], env)]);
      for (const [label, outcome] of tooBig) {
        const r = await outcome;
        expect([label, r.code]).toEqual([label, 2]);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toMatch(/^aca: the task .*over the limit of 65536/);
      }
      for (const refused of Object.values(ids)) {
        await expect(h.client.workflow.getHandle(refused).describe()).rejects.toThrow(/not found/i);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a run Temporal terminated shows as TERMINATED in aca list and aca status, and aca discard removes its worktree and branch', async () => {
    const repo = makeRepo({ 'README.md': 'a project\n' });
    const id = newId('terminated');
    const started = await runCli(
      [...fizzbuzz(id), '--repo', repo, '--max-iterations', '1', '--on-limit', 'ask', '--detach'],
      env,
    );
    expect(started.code).toBe(0);
    // Waiting at its limit, with its first attempt committed on its branch.
    await until(
      async () => (await h.client.workflow.getHandle(id).query(stateQuery)).waiting === 'limit',
      90_000,
      `${id} waiting at its limit`,
    );
    // Whoever terminates a run writes its reason: hostile text, shown with its controls as escapes.
    const reason = 'BadScheduleActivityAttributes: input exceeds size limit\x1b[2J\nSUCCESS forged';
    const shown = 'BadScheduleActivityAttributes: input exceeds size limit\\x1b[2J\\nSUCCESS forged';
    await h.client.workflow.getHandle(id).terminate(reason);
    const worktree = path.join(h.home, 'workspaces', id);
    expect(fs.existsSync(worktree)).toBe(true);

    const listed = await runCli(['list'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n').find((line) => line.includes(id))).toMatch(/ TERMINATED +1 /);

    const status = await runCli(['status', id], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^${id}: TERMINATED \\(in REFLECTING\\)$`, 'm'));
    expect(status.stdout).toContain(`  last error: terminated by Temporal: ${shown}\n`);
    expect(status.stdout).not.toContain('\x1b');
    expect(status.stdout).toContain(`aca discard ${id} removes them`);
    const json = JSON.parse((await runCli(['status', id, '--json'], env)).stdout) as RunSnapshot;
    expect(json).toMatchObject({
      ended: { status: 'TERMINATED', reason },
      branch: `aca/${id}`,
      repo: fs.realpathSync(repo),
      changedFiles: expect.arrayContaining([expect.objectContaining({ path: 'fizzbuzz.py' })]),
    });

    const result = await runCli(['result', id], env);
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('\x1b');
    // The reason's newline stays (the error's later lines are indented under its `aca:` line).
    expect(result.stderr.trim()).toBe(
      `aca: run ${id} was terminated by Temporal: BadScheduleActivityAttributes: input exceeds size limit\\x1b[2J\n  SUCCESS forged; it has no result: aca status ${id} shows what is left of it, aca discard ${id} removes its worktree and branch`,
    );

    // Its changes were never applied: without a terminal, only --force throws them away.
    const unforced = await runCli(['discard', id], env);
    expect(unforced.code).toBe(2);
    expect(fs.existsSync(worktree)).toBe(true);
    const discarded = await runCli(['discard', id, '--force'], env);
    expect(discarded.stderr).toBe('');
    expect(discarded.code).toBe(0);
    expect(discarded.stdout).toContain(`branch aca/${id}`);
    expect(fs.existsSync(worktree)).toBe(false);
    const branches = execFileSync('git', ['-C', repo, 'branch', '--list', `aca/${id}`], { encoding: 'utf8' });
    expect(branches.trim()).toBe('');
    const worktrees = execFileSync('git', ['-C', repo, 'worktree', 'list'], { encoding: 'utf8' });
    expect(worktrees).not.toContain(id);
  });
});
