/**
 * A run's life after its first ending, with the commands a user types: a FAILED run retried to
 * SUCCESS, a SUCCESS run continued with an instruction, a fork at attempt 2 that starts from the
 * original's commit of attempt 1, and the bad input around them.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { completedActivities } from '../../src/api/history-payloads';
import { loadBuiltinScenario, loadScenarios } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { runCli } from '../helpers/run-cli';
import { until } from '../helpers/until';

const FIZZBUZZ = loadBuiltinScenario('demo-fizzbuzz').task!;
const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');

describe('linked runs: continue, retry, fork', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;
  let counter = 0;
  const id = (label: string) => `linked-${label}-${process.pid}-${++counter}`;
  const fizzbuzz = async (runId: string, ...more: string[]): Promise<RunResult> => {
    const out = await runCli(
      ['run', FIZZBUZZ, '--model', 'scripted:demo-fizzbuzz', '--id', runId, '--json', ...more],
      env,
    );
    return JSON.parse(out.stdout) as RunResult;
  };
  const json = async (args: string[]) => {
    const out = await runCli([...args, '--json'], env);
    if (!out.stdout.trim()) throw new Error(`aca ${args.join(' ')} printed nothing: ${out.stderr}`);
    return { code: out.code, result: JSON.parse(out.stdout) as RunResult };
  };
  const git = (result: RunResult, ...args: string[]) =>
    execFileSync('git', ['--git-dir', result.place!.commonDir, ...args], { encoding: 'utf8' }).trim();
  // One SUCCESS run serves every test that only starts from it or is refused on it; the fork
  // test has its own, as it lists the original's whole family.
  let ended: Promise<RunResult> | undefined;
  const endedRun = (): Promise<RunResult> => (ended ??= fizzbuzz(id('ended')));

  beforeAll(async () => {
    h = await createHarness({ scenarios: [...loadScenarios(), ...loadScenarios(TEST_SCENARIOS)] });
    await h.startWorker();
    env = h.cliEnv();
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  test('a FAILED run retried goes on from its last commit and analysis to SUCCESS', async () => {
    const failed = await fizzbuzz(id('failed'), '--max-iterations', '1');
    expect(failed).toMatchObject({ state: 'FAILED', reason: 'max_iterations', iterations: 1 });
    const retryId = id('retry');
    const before = h.llm.requests.length;
    const { code, result } = await json(['retry', failed.workflowId, '--id', retryId]);
    expect(code).toBe(0);
    expect(result).toMatchObject({
      workflowId: retryId,
      state: 'SUCCESS',
      iterations: 2,
      maxIterations: 2,
      parentRun: failed.workflowId,
      baseCommit: failed.baseCommit,
    });
    // No new plan and no new tests: the Coder of attempt 2 had the earlier analysis.
    const asked = h.llm.requests.slice(before);
    expect(asked.map((r) => r.agent)).not.toContain('planner');
    expect(asked.map((r) => r.agent)).not.toContain('tester');
    const coder = asked.find((r) => r.agent === 'coder')!;
    const opening = String(coder.messages.find((m) => m.role === 'user')?.content);
    expect(opening).toContain('This is coding attempt 2 of at most 2.');
    expect(opening).toContain(failed.lastAnalysis!.rootCause);
    // Its branch starts at the failed run's last commit.
    expect(git(result, 'rev-parse', `${result.attempts[0]!.commit}^`)).toBe(failed.headCommit);
  }, 120_000);

  test('a SUCCESS run continued: the Planner sees the earlier task, what was done and the instruction', async () => {
    const done = await endedRun();
    expect(done.state).toBe('SUCCESS');
    const instruction = 'Also make fizzbuzz(0) return "0" and document the function.';
    const before = h.llm.requests.length;
    const continued = await json(['continue', done.workflowId, instruction, '--id', id('continue')]);
    expect(continued.result).toMatchObject({ parentRun: done.workflowId, baseCommit: done.baseCommit });
    const planner = h.llm.requests.slice(before).find((r) => r.agent === 'planner')!;
    const opening = String(planner.messages.find((m) => m.role === 'user')?.content);
    expect(opening).toContain(`Task:\n${instruction}`);
    expect(opening).toContain(`The earlier run's task was:\n${FIZZBUZZ}`);
    expect(opening).toMatch(/It ended SUCCESS after 2 attempts/);
    expect(opening).toMatch(/Changed files: added fizzbuzz\.py \(\+\d+ -0\)/);
    // It started from the earlier run's final files.
    const first = git(
      continued.result,
      'rev-list',
      '--reverse',
      `${done.headCommit}..${continued.result.headCommit}`,
    ).split('\n')[0]!;
    expect(git(continued.result, 'rev-parse', `${first}^`)).toBe(done.headCommit);
  }, 120_000);

  test('a fork at attempt 2 starts from the commit of attempt 1, with its history starting at attempt 2', async () => {
    const original = await fizzbuzz(id('original'));
    expect(original).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    const attempt1 = original.attempts.find((a) => a.iteration === 1)!.commit;
    const forkId = id('fork');
    const before = h.llm.requests.length;
    const { result } = await json([
      'fork',
      original.workflowId,
      '--at',
      '2',
      '--feedback',
      'Mind 15.',
      '--id',
      forkId,
    ]);
    expect(result).toMatchObject({ parentRun: original.workflowId, state: 'SUCCESS', iterations: 2 });
    expect(result.attempts.map((a) => a.iteration)).toEqual([2]);
    // The fork's branch starts at the original's commit of attempt 1: its first commit's parent
    // is that commit, and the work tree it started with is that commit's tree, byte for byte.
    const first = result.attempts[0]!.commit;
    expect(git(result, 'rev-parse', `${first}^`)).toBe(attempt1);
    expect(git(result, 'rev-parse', `${first}^^{tree}`)).toBe(
      git(original, 'rev-parse', `${attempt1}^{tree}`),
    );
    const asked = h.llm.requests.slice(before);
    expect(asked.map((r) => r.agent)).not.toContain('planner');
    const coder = asked.find((r) => r.agent === 'coder')!;
    const opening = String(coder.messages.find((m) => m.role === 'user')?.content);
    expect(opening).toContain('This is coding attempt 2');
    expect(opening).toContain('- Mind 15.');
    expect(opening).toContain(original.lastAnalysis!.rootCause);
    // The fork's history begins at attempt 2: no turn of attempt 1 is in it.
    await h.recordHistory(h.client.workflow.getHandle(forkId), 'fork-at-2');
    const history = await h.client.workflow.getHandle(forkId).fetchHistory();
    const turns = completedActivities(history.events ?? [])
      .filter((a) => a.type === 'agentStep')
      .map((a) =>
        String((a.input as { ref: string }).ref)
          .split('/')
          .pop(),
      );
    expect(turns).toContain('coder-2');
    expect(turns.filter((t) => /-1$/.test(t ?? ''))).toEqual([]);
    // aca list shows the family through the AgentParentRun search attribute.
    let rows: Array<{ workflowId: string; parentRun: string | null }> = [];
    await until(
      async () => {
        const listed = await runCli(['list', '--parent', original.workflowId, '--json'], env);
        rows = JSON.parse(listed.stdout) as typeof rows;
        return rows.length > 0;
      },
      30_000,
      'the fork in aca list --parent',
    );
    expect(rows).toEqual([expect.objectContaining({ workflowId: forkId, parentRun: original.workflowId })]);
    const table = await runCli(['list', '--parent', original.workflowId], env);
    expect(table.stdout).toContain(`${forkId} (from ${original.workflowId})`);
    // The whole family, not one generation: a run continuing the fork is listed under the original too.
    const grandchild = `${forkId}-again`;
    const again = await runCli(['continue', forkId, 'Tidy up.', '--id', grandchild, '--detach'], env);
    expect(again.code).toBe(0);
    try {
      await until(
        async () => {
          const listed = await runCli(['list', '--parent', original.workflowId, '--json'], env);
          rows = JSON.parse(listed.stdout) as typeof rows;
          return rows.length === 2;
        },
        30_000,
        'the fork of the fork in aca list --parent',
      );
      expect(rows.map((r) => [r.workflowId, r.parentRun]).sort()).toEqual(
        [
          [forkId, original.workflowId],
          [grandchild, forkId],
        ].sort(),
      );
    } finally {
      await h.client.workflow
        .getHandle(grandchild)
        .terminate('test over')
        .catch(() => undefined);
    }
  }, 120_000);

  test.each([
    [
      'a fork at an attempt the run never reached',
      (run: RunResult) => ['fork', run.workflowId, '--at', '5'],
      /never reached attempt 5: it made 2 attempts/,
    ],
    ['a fork without --at', (run: RunResult) => ['fork', run.workflowId], /--at K is needed/],
    [
      'a retry of a SUCCESS run',
      (run: RunResult) => ['retry', run.workflowId],
      /ended SUCCESS: aca retry goes on from a FAILED run/,
    ],
    [
      'an empty instruction',
      (run: RunResult) => ['continue', run.workflowId, '  '],
      /the instruction is empty/,
    ],
    ['an unknown run', () => ['retry', 'no-such-run'], /unknown run id "no-such-run"/],
  ])(
    '%s: one clear line, exit 2, nothing started',
    async (_name, args, message) => {
      const newId = id('never');
      const out = await runCli([...args(await endedRun()), '--id', newId], env);
      expect(out.code).toBe(2);
      expect(out.stderr.trim().split('\n')).toHaveLength(1);
      expect(out.stderr).toMatch(message);
      expect((await runCli(['status', newId], env)).code).toBe(2);
      expect(fs.existsSync(path.join(h.home, 'workspaces', newId))).toBe(false);
    },
    120_000,
  );

  test('a continue of a run still going: exit 2; feedback to an ended run names aca continue', async () => {
    const going = id('going');
    const started = await runCli(
      [
        'run',
        FIZZBUZZ,
        '--model',
        'scripted:demo-fizzbuzz',
        '--id',
        going,
        '--on-limit',
        'ask',
        '--max-iterations',
        '1',
        '--detach',
      ],
      env,
    );
    expect(started.code).toBe(0);
    const out = await runCli(['continue', going, 'more'], env);
    expect([out.code, out.stderr.trim()]).toEqual([
      2,
      `aca: run ${going} is still going; aca continue starts from a run that has ended`,
    ]);
    await runCli(['cancel', going], env);
    await runCli(['result', going], env);
    const late = await runCli(['feedback', going, 'too late'], env);
    expect(late.code).toBe(2);
    expect(late.stderr).toContain(`aca continue ${going} "<instruction>"`);
  }, 120_000);
});
