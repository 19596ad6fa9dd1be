/**
 * Temporal's Reset on a finished `--repo` run, with the Temporal CLI as an operator would use it:
 * reset to the workflow task before the last attempt's Coder turn. The re-run is a new execution:
 * it works on the files of the commit recorded at that point, asks the model again, and its own
 * commits are the run's result, diff and apply.
 */
import { readRunResult } from '../../src/shared/run-failure';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { Scenario } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { findTemporalCli } from '../../src/temporal/temporal-cli';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { addVenv, gitIn, makeRepo, removeFixtureRepos } from '../helpers/repo-fixtures';
import { runCli } from '../helpers/run-cli';

type Call = { name: string; arguments: Record<string, unknown> };
const step = (...calls: Call[]) => ({ tool_calls: calls });
const call = (name: string, args: Record<string, unknown>): Call => ({ name, arguments: args });
const finish = (summary: string) => step(call('finish', { summary }));
const edit = (file: string, from: string, to: string) =>
  call('edit_file', { path: file, old_string: from, new_string: to });

const TASK = 'Fix add() in calc/ops.py: it subtracts';
const PROJECT = {
  '.gitignore': '.venv/\n__pycache__/\n',
  'calc/__init__.py': '',
  'calc/ops.py': 'def add(a, b):\n    return a - b\n',
  'tests/test_ops.py': 'from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
};

const scenarios: Scenario[] = [
  {
    name: 'reset-py-fix',
    agents: {
      planner: [[step(call('submit_plan', { summary: 'Fix it', steps: ['fix'], files: [] }))]],
      coder: [
        [step(edit('calc/ops.py', 'return a - b', 'return a * b + 0')), finish('add multiplies now')],
        // Only on attempt 1's files does this edit find its text: attempt 2's files add already.
        [step(edit('calc/ops.py', 'return a * b + 0', 'return a + b')), finish('add adds')],
      ],
      tester: [
        [
          step(
            call('create_file', {
              path: 'tests/test_task.py',
              content: 'from calc.ops import add\n\n\ndef test_add_adds():\n    assert add(40, 2) == 42\n',
            }),
          ),
          finish('wrote it'),
        ],
      ],
      reflector: [
        [
          step(
            call('submit_analysis', {
              root_cause: 'add multiplies',
              fix_hypothesis: 'add',
              files_to_change: ['calc/ops.py'],
              tests_wrong: false,
            }),
          ),
        ],
      ],
    },
  },
];

/** The WorkflowTaskCompleted event of the task that scheduled the first `activity` whose input matches. */
async function taskThatScheduled<T>(
  handle: WorkflowHandle,
  activity: string,
  matches: (input: T) => boolean,
): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduling = events.find((e) => {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== activity) return false;
    const payload = scheduled.input?.payloads?.[0]?.data;
    return matches(JSON.parse(Buffer.from(payload!).toString('utf8')) as T);
  });
  const completed = scheduling?.activityTaskScheduledEventAttributes?.workflowTaskCompletedEventId;
  if (!completed) throw new Error(`no such ${activity} in the history`);
  return Number(completed);
}

/** The task that opened the Coder's turn of `attempt`. */
const taskBeforeCoderTurn = (handle: WorkflowHandle, attempt: number) =>
  taskThatScheduled<{ open: { ref: string } }>(handle, 'openTurn', (input) =>
    input.open.ref.endsWith(`/coder-${attempt}`),
  );

/** The task that asked for the first model step of `turnKey`. */
const taskBeforeFirstStep = (handle: WorkflowHandle, turnKey: string) =>
  taskThatScheduled<{ ref: string; stepIndex: number }>(
    handle,
    'agentStep',
    (input) => input.ref.endsWith(`/${turnKey}`) && input.stepIndex === 0,
  );

describe('a Reset of a finished --repo run to before its last attempt', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness({ scenarios });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
    removeFixtureRepos();
  });

  /** A finished run of the scenario on a fresh repository: SUCCESS at attempt 2. */
  async function finishedRun(idPrefix: string) {
    const repo = makeRepo(PROJECT);
    addVenv(repo, {});
    const id = `${idPrefix}-${randomBytes(3).toString('hex')}`;
    const ran = await runCli(
      ['run', TASK, '--repo', repo, '--model', 'scripted:reset-py-fix', '--id', id, '--json'],
      h.cliEnv(),
    );
    const first = JSON.parse(ran.stdout) as RunResult;
    expect(first).toMatchObject({ state: 'SUCCESS', iterations: 2 });
    return { repo, id, first, handle: h.client.workflow.getHandle(id) };
  }

  /** `temporal workflow reset` of run `id` to `eventId`, as an operator types it; the re-run's result. */
  async function resetTo(id: string, eventId: number, reason: string): Promise<RunResult> {
    const cli = findTemporalCli();
    if (!cli) throw new Error('this test needs the Temporal CLI (see src/temporal/temporal-cli.ts)');
    const reset = spawnSync(
      cli,
      [
        'workflow',
        'reset',
        '--workflow-id',
        id,
        '--event-id',
        String(eventId),
        '--reason',
        reason,
        '--address',
        h.config.temporalAddress,
        '--namespace',
        h.config.namespace,
      ],
      { encoding: 'utf8' },
    );
    expect(reset.stderr).toBe('');
    expect(reset.status).toBe(0);
    return (await readRunResult(h.client.workflow.getHandle(id))) as RunResult;
  }

  test("the re-run starts from attempt 1's files, asks the model again, and its commits are the result, diff and apply", async () => {
    const { repo, id, first, handle } = await finishedRun('reset');
    const head = gitIn(repo, 'rev-parse', 'HEAD').trim();
    const env = h.cliEnv();
    const [attempt1, attempt2] = first.attempts.map((a) => a.commit);
    expect(first.headCommit).toBe(attempt2);
    const coderTwoAsked = () =>
      h.llm.requests.filter((r) => r.agent === 'coder' && r.turn === 1 && r.status === 200).length;
    const askedBefore = coderTwoAsked();
    expect(askedBefore).toBeGreaterThan(0);

    const again = await resetTo(id, await taskBeforeCoderTurn(handle, 2), 'run the last attempt again');
    // The model was asked again for attempt 2, and its edit found attempt 1's text: the re-run
    // worked on the files of the commit recorded at the reset point.
    expect(coderTwoAsked()).toBeGreaterThan(askedBefore);
    expect(again).toMatchObject({ state: 'SUCCESS', iterations: 2, error: null });
    expect(again.attempts[0]!.commit).toBe(attempt1);
    const rerun = again.attempts[1]!.commit;
    expect(rerun).not.toBe(attempt2);
    expect(again.headCommit).toBe(rerun);
    expect(gitIn(repo, 'rev-parse', `${rerun}^`).trim()).toBe(attempt1);
    // The branch is the re-run's.
    expect(gitIn(repo, 'rev-parse', `aca/${id}`).trim()).toBe(rerun);
    expect(gitIn(repo, 'log', '-1', '--format=%(trailers:key=Aca-Execution,valueonly)', rerun).trim()).toBe(
      (await handle.describe()).runId,
    );

    const diff = await runCli(['diff', id], env);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('+    return a + b');
    const result = await runCli(['result', id, '--json'], env);
    expect((JSON.parse(result.stdout) as RunResult).headCommit).toBe(rerun);
    const applied = await runCli(['apply', id], env);
    expect(applied.code).toBe(0);
    expect(fs.readFileSync(path.join(repo, 'calc/ops.py'), 'utf8')).toBe(
      'def add(a, b):\n    return a + b\n',
    );
    expect(gitIn(repo, 'rev-parse', 'HEAD^').trim()).toBe(head);
  }, 300_000);

  test("reset to the task that takes up the Reflector's turn the failed test run opened: the new execution takes the opening over and asks the model again", async () => {
    const { repo, id, first, handle } = await finishedRun('reset-open');
    const [attempt1, attempt2] = first.attempts.map((a) => a.commit);
    const asked = (agent: string) =>
      h.llm.requests.filter((r) => r.agent === agent && r.status === 200).length;
    const reflectorBefore = asked('reflector');

    // In the kept history the Reflector's turn is already open (by the failed test run), under
    // the execution that is reset.
    const again = await resetTo(id, await taskBeforeFirstStep(handle, 'reflector-1'), 'reflect again');
    expect(again).toMatchObject({ state: 'SUCCESS', iterations: 2, error: null });
    // The Reflector was asked again, once: its one step, on the opening taken over.
    expect(asked('reflector')).toBe(reflectorBefore + 1);
    expect(again.lastAnalysis?.rootCause).toBe('add multiplies');
    expect(again.attempts[0]!.commit).toBe(attempt1);
    expect(again.attempts[1]!.commit).not.toBe(attempt2);
    expect(again.headCommit).toBe(again.attempts[1]!.commit);
    expect(gitIn(repo, 'show', `${again.headCommit}:calc/ops.py`)).toBe('def add(a, b):\n    return a + b\n');
  }, 300_000);
});
