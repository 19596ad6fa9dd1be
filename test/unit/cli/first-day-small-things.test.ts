/**
 * Small things a newcomer expects, each where it is decided: ids a person can type, the latest
 * run started here, a suggestion for a mistyped command, no "0%" for a run that counted no test,
 * and the embedded database held by a worker being fine for `aca doctor`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommanderError } from 'commander';
import type { AcaClient } from '../../../src/api/aca-client';
import { newRunId, RUN_ID_ALPHABET } from '../../../src/api/run-ids';
import { validateRunRequest } from '../../../src/api/run-request';
import { latestStartedRun, recordStartedRun, STARTED_RUNS_FILE } from '../../../src/api/started-runs';
import { commanderExit } from '../../../src/cli/commander-exit';
import { listCommand, statusCommand } from '../../../src/cli/inspect-commands';
import { summaryLines } from '../../../src/cli/progress';
import { buildProgram } from '../../../src/cli/program';
import { loadConfig } from '../../../src/config';
import { checkDatabase } from '../../../src/preflight/host-checks';
import { UserInputError } from '../../../src/shared/errors';
import type { RunSnapshot } from '../../../src/shared/run-types';
import { renderDetails } from '../../../src/workflows/details';
import { makeRepo, removeFixtureRepos } from '../../helpers/repo-fixtures';

const temp: string[] = [];
const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temp.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of temp) fs.rmSync(dir, { recursive: true, force: true });
  removeFixtureRepos();
});

describe('run ids a person can type', () => {
  test('a few words of the task and five characters that cannot be mistaken for others', () => {
    const id = newRunId('mean() fails on empty input (test_mean_empty); fix it');
    expect(id).toMatch(/^mean-fails-on-[2-9a-hjkmnp-z]{5}$/);
    expect(RUN_ID_ALPHABET).not.toMatch(/[01ilo]/);
    expect(newRunId('Supercalifragilisticexpialidocious words')).toMatch(
      /^supercalifragilistic-[a-z2-9]{5}$/,
    );
    expect(newRunId('!!!')).toMatch(/^run-[a-z2-9]{5}$/);
    expect(new Set(Array.from({ length: 200 }, () => newRunId('x'))).size).toBe(200);
  });

  test('a run without --id gets one; --id is kept as given', async () => {
    const config = loadConfig({ ...process.env, ACA_HOME: tempDir('aca-ids-') });
    const task = 'Write fizzbuzz(n) in fizzbuzz.py returning Fizz, Buzz or the number';
    const generated = await validateRunRequest({ task, language: 'python' }, config);
    expect(generated.workflowId).toMatch(/^write-fizzbuzz-n-[2-9a-hjkmnp-z]{5}$/);
    const given = await validateRunRequest({ task, language: 'python', id: 'My-Own_ID.1' }, config);
    expect(given.workflowId).toBe('My-Own_ID.1');
  });
});

describe('the latest run started here', () => {
  test('from this repository (any folder of it) or this folder, else the latest of the home', async () => {
    const home = tempDir('aca-started-');
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const other = tempDir('aca-other-');
    const sub = path.join(repo, 'sub');
    fs.mkdirSync(sub);
    recordStartedRun(home, { workflowId: 'in-repo', repo: fs.realpathSync(repo) }, other);
    recordStartedRun(home, { workflowId: 'fresh-here', repo: null }, other);
    recordStartedRun(home, { workflowId: 'newest', repo: null }, tempDir('aca-third-'));
    expect(await latestStartedRun(home, sub)).toEqual({ workflowId: 'in-repo', from: 'here' });
    expect(await latestStartedRun(home, other)).toEqual({ workflowId: 'fresh-here', from: 'here' });
    expect(await latestStartedRun(home, tempDir('aca-none-'))).toEqual({
      workflowId: 'newest',
      from: 'home',
    });
  });

  test('a line that does not parse is skipped; a home that started nothing is bad input', async () => {
    const home = tempDir('aca-started-');
    await expect(latestStartedRun(home)).rejects.toThrow(UserInputError);
    recordStartedRun(home, { workflowId: 'good', repo: null }, home);
    fs.appendFileSync(path.join(home, STARTED_RUNS_FILE), '{"workflowId": "cut');
    expect(await latestStartedRun(home, home)).toEqual({ workflowId: 'good', from: 'here' });
  });
});

describe('a mistyped command', () => {
  test.each([
    [['stauts'], "aca: unknown command 'stauts'; did you mean status?"],
    [['lsit'], "aca: unknown command 'lsit'; did you mean list?"],
    [['status', 'x', '--jsno'], "aca: unknown option '--jsno'; did you mean --json?"],
    [['fly'], "aca: unknown command 'fly'"],
  ])('%p: %s', (argv, line) => {
    const err: string[] = [];
    const io = { out: () => undefined, err: (text: string) => void err.push(text), isTTY: false };
    const { program } = buildProgram(io);
    let code: number | null = null;
    try {
      program.parse(['node', 'aca', ...argv]);
    } catch (e) {
      if (!(e instanceof CommanderError)) throw e;
      code = commanderExit(e, io);
    }
    expect([code, err]).toEqual([2, [line]]);
  });
});

describe('a run whose tests never counted one shows no pass rate', () => {
  const snapshot: RunSnapshot = {
    workflowId: 'no-tests-k7m2x',
    state: 'FAILED',
    reason: 'max_iterations',
    iterations: 15,
    maxIterations: 15,
    passRate: 0,
    tests: { passed: 0, failed: 0, errors: 0 },
    workspace: '/w',
    files: [],
    tokens: { prompt: 1, completion: 1 },
    transitions: [],
    paused: false,
    waiting: null,
    warning: null,
    lastAnalysis: null,
    error: null,
    repo: null,
    branch: null,
    baseCommit: null,
    headCommit: null,
    changedFiles: [],
    baseline: null,
    regressions: [],
    targets: [],
    failingTests: [],
    unknownTargets: [],
    attempts: [],
    cost: null,
    parentRun: null,
    place: null,
    testCommand: null,
  };

  test('the summary, aca status and the Web UI details', async () => {
    const { paused: _p, waiting: _w, ...result } = snapshot;
    const summary = summaryLines(result, 'http://ui');
    expect(summary).toContain('  tests:     no tests run');
    expect(summary.join('\n')).not.toContain('0%');
    expect(renderDetails(snapshot)).toContain('- **Pass rate:** no tests run (0 passed, 0 failed, 0 errors)');
    const out: string[] = [];
    const aca = {
      run: () => ({ state: async () => snapshot, discardedAt: () => null }),
    } as unknown as AcaClient;
    await statusCommand(
      aca,
      snapshot.workflowId,
      {},
      { out: (t) => void out.push(t), err: () => undefined, isTTY: false },
    );
    expect(out[1]).toBe('  iteration 15/15, pass rate no tests run, paused: no');
  });

  test('aca list: "-" for a run that has not finished a test run, the rate once it has', async () => {
    const row = (workflowId: string, state: string, iteration: number, passRate: number) => ({
      workflowId,
      state,
      iteration,
      passRate,
      language: 'python',
      startTime: '2026-11-28T10:00:00.000Z',
      status: 'COMPLETED',
      parentRun: null,
    });
    const rows = [
      row('environment', 'FAILED', 0, 0),
      row('coding', 'CODING', 1, 0),
      row('tested', 'FAILED', 1, 0),
      row('half', 'REFLECTING', 2, 0.5),
    ];
    const aca = { list: async () => rows, run: () => ({ discardedAt: () => null }) } as unknown as AcaClient;
    const out: string[] = [];
    await listCommand(aca, {}, { out: (t) => void out.push(t), err: () => undefined, isTTY: false });
    const pass = (id: string) => out.find((l) => l.endsWith(` ${id}`))!.split(/\s+/)[4];
    expect([pass('environment'), pass('coding'), pass('tested'), pass('half')]).toEqual([
      '-',
      '-',
      '0%',
      '50%',
    ]);
  });
});

describe('aca doctor beside a worker that holds the embedded database', () => {
  let holder: ChildProcess;
  beforeAll(() => {
    holder = spawn('sleep', ['120'], { stdio: 'ignore' });
  });
  afterAll(() => holder.kill('SIGKILL'));

  test('held by another process: fine for the doctor, a conflict for a command that opens it', async () => {
    const home = tempDir('aca-held-');
    fs.mkdirSync(path.join(home, 'memory'));
    fs.writeFileSync(
      path.join(home, 'memory', 'aca-memory.lock'),
      JSON.stringify({ pid: holder.pid, startedAt: new Date().toISOString() }),
    );
    const { DATABASE_URL: _unset, ...rest } = process.env;
    const config = loadConfig({ ...rest, ACA_HOME: home });
    expect(await checkDatabase(config, 'fine')).toEqual({
      name: 'database',
      status: 'ok',
      detail: expect.stringContaining(`in use by process ${holder.pid}`),
    });
    expect(await checkDatabase(config, 'blocks')).toMatchObject({ name: 'database', status: 'missing' });
  });
});
