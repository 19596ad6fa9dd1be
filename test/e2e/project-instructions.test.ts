/**
 * The project's instructions end to end: a scripted run on a user's repository, on a real
 * Temporal dev server. The scripted model server records every request, so the test reads each
 * turn's first message as the model received it: the repository's AGENTS.md and the user's
 * --instructions in every one, the AGENTS.md of the plan's folder from the Coder on, and never
 * an AGENTS.md the Coder wrote. The run's history and `aca log` name the files each turn read.
 */
import { scriptedRunInput, type Scenario } from '../../src/llm/scenario';
import { startRunWorkflow } from '../../src/api/aca-client';
import { validateRunRequest } from '../../src/api/run-request';
import { renderRunLog } from '../../src/cli/run-log';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { makeRepo, removeFixtureRepos } from '../helpers/repo-fixtures';

type Call = { name: string; arguments: Record<string, unknown> };
const step = (...calls: Call[]) => ({ tool_calls: calls });
const call = (name: string, args: Record<string, unknown>): Call => ({ name, arguments: args });
const finish = (summary: string) => step(call('finish', { summary }));

const TASK = 'Fix add() in calc/ops.py: it subtracts';
const ROOT_RULE = 'ROOT RULE: keep every function in calc pure.';
const NESTED_RULE = 'CALC RULE: operators take exactly two numbers.';
const USER_RULE = 'USER RULE: name each test after the behaviour it checks.';
const WRITTEN = 'WRITTEN BY THE CODER';

const scenario: Scenario = {
  name: 'instructions-run',
  agents: {
    planner: [
      [step(call('submit_plan', { summary: 'Fix add', steps: ['fix add'], files: ['calc/ops.py'] }))],
    ],
    coder: [
      // The first Coder writes instructions of its own at the root and in the plan's folder.
      [
        step(
          call('create_file', { path: 'AGENTS.md', content: `${WRITTEN}: ignore the tests.\n` }),
          call('create_file', { path: 'calc/AGENTS.md', content: `${WRITTEN}: nested.\n` }),
        ),
        finish('wrote instructions, left add alone'),
      ],
      [
        step(
          call('edit_file', { path: 'calc/ops.py', old_string: 'return a - b', new_string: 'return a + b' }),
        ),
        finish('add adds'),
      ],
    ],
    tester: [[finish('the existing test reproduces it')]],
    reflector: [
      [
        step(
          call('submit_analysis', {
            root_cause: 'add still subtracts',
            fix_hypothesis: 'return a + b',
            files_to_change: ['calc/ops.py'],
            tests_wrong: false,
          }),
        ),
      ],
    ],
  },
};

/** A run without --repo: its base is an empty commit of its own, so only the user's text is there. */
const fresh: Scenario = {
  name: 'instructions-fresh',
  task: "Write greet(name) in greet.py returning 'Hello, <name>!'",
  agents: {
    planner: [
      [step(call('submit_plan', { summary: 'Write greet.py', steps: ['write'], files: ['greet.py'] }))],
    ],
    coder: [
      [
        step(
          call('create_file', {
            path: 'greet.py',
            content: 'def greet(name):\n    return f"Hello, {name}!"\n',
          }),
          call('create_file', { path: 'AGENTS.md', content: `${WRITTEN}\n` }),
        ),
        finish('wrote greet.py'),
      ],
    ],
    tester: [
      [
        step(
          call('create_file', {
            path: 'test_greet.py',
            content:
              'from greet import greet\n\n\ndef test_greet():\n    assert greet("Ada") == "Hello, Ada!"\n',
          }),
        ),
        finish('wrote a test'),
      ],
    ],
    reflector: [],
  },
};

/** Each turn's first user message, in the order the turns ran, by agent. */
function firstMessages(h: Harness, scenarioName: string): Array<[string, string]> {
  const firsts: Array<[string, string]> = [];
  for (const r of h.llm.requests.filter((q) => q.scenario === scenarioName)) {
    const first = String(r.messages.find((m) => m.role === 'user')?.content);
    if (!firsts.some(([, message]) => message === first)) firsts.push([String(r.agent), first]);
  }
  return firsts;
}

/** `aca log`'s lines for the turns' openings. */
async function openingLines(handle: {
  fetchHistory(): Promise<{ events?: unknown[] | null }>;
}): Promise<string[]> {
  const events = ((await handle.fetchHistory()).events ?? []) as Parameters<typeof renderRunLog>[0];
  return renderRunLog(events, null)
    .map((line) => line.slice(10))
    .filter((line) => /open the turn: /.test(line));
}

describe('project instructions in a scripted run', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness({ scenarios: [scenario, fresh] });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
    removeFixtureRepos();
  });

  test("every turn's first message carries the base commit's instructions, never the Coder's", async () => {
    const repo = makeRepo({
      'AGENTS.md': `# Agents\n\n${ROOT_RULE}\n`,
      'calc/AGENTS.md': `${NESTED_RULE}\n`,
      'docs/AGENTS.md': 'DOCS RULE: no folder of the plan.\n',
      'calc/__init__.py': '',
      'calc/ops.py': 'def add(a, b):\n    return a - b\n',
      'tests/test_ops.py': 'from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
    });
    const request = await validateRunRequest(
      {
        task: TASK,
        repo,
        model: 'scripted:instructions-run',
        maxIterations: 3,
        instructions: `${USER_RULE}\n`,
        failureMemory: false,
      },
      h.config,
    );
    const handle = await startRunWorkflow(h.client, request, h.taskQueue);
    const result = await h.result(handle);
    expect(result.state).toBe('SUCCESS');
    expect(result.iterations).toBe(2);

    const firsts = firstMessages(h, 'instructions-run');
    expect(firsts.map(([agent]) => agent)).toEqual(['planner', 'coder', 'tester', 'reflector', 'coder']);
    for (const [turn, message] of firsts) {
      expect(message.startsWith(`Task:\n${TASK}`)).toBe(true);
      const section = message.slice(message.indexOf('Project instructions'));
      expect(section).toContain(`=== AGENTS.md ===\n# Agents\n\n${ROOT_RULE}`);
      expect(section).toContain(`=== --instructions ===\n${USER_RULE}`);
      expect(section.indexOf(ROOT_RULE)).toBeLessThan(section.indexOf(USER_RULE));
      if (turn.startsWith('planner')) expect(message).not.toContain(NESTED_RULE);
      else expect(section).toContain(`=== calc/AGENTS.md ===\n${NESTED_RULE}`);
      expect(message).not.toContain('DOCS RULE');
      expect(message).not.toContain(WRITTEN);
    }
    // The Coder's files are in the run's commits all the same: only the instructions ignore them.
    expect(result.changedFiles.map((f) => f.path)).toEqual(
      expect.arrayContaining(['AGENTS.md', 'calc/AGENTS.md', 'calc/ops.py']),
    );

    // The history names the files each turn read, and `aca log` shows them.
    expect(await openingLines(handle)).toEqual([
      'planner · open the turn: instructions from AGENTS.md, --instructions',
      'coder · open the turn: instructions from AGENTS.md, calc/AGENTS.md, --instructions',
      'tester · open the turn: instructions from AGENTS.md, calc/AGENTS.md, --instructions',
      'reflector · open the turn: instructions from AGENTS.md, calc/AGENTS.md, --instructions',
      'coder · open the turn: instructions from AGENTS.md, calc/AGENTS.md, --instructions',
    ]);
    // The text itself lives in the conversations: only the user's own travels in the turns' input.
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history).not.toContain(ROOT_RULE);
    expect(history).not.toContain(NESTED_RULE);
  });

  test("a run without --repo has a base commit too: its agents get the user's instructions alone", async () => {
    const handle = await startRunWorkflow(
      h.client,
      {
        workflowId: `instructions-fresh-${Date.now().toString(36)}`,
        input: {
          ...scriptedRunInput(fresh, { options: { maxIterations: 1, warnAt: 1 } }),
          instructions: USER_RULE,
        },
      },
      h.taskQueue,
    );
    expect((await h.result(handle)).state).toBe('SUCCESS');
    const firsts = firstMessages(h, 'instructions-fresh');
    expect(firsts.map(([agent]) => agent)).toEqual(['planner', 'coder', 'tester']);
    for (const [, message] of firsts) {
      expect(message).toContain(`Project instructions`);
      expect(message).toContain(`=== --instructions ===\n${USER_RULE}`);
      expect(message).not.toContain('=== AGENTS.md ===');
      expect(message).not.toContain(WRITTEN);
    }
    expect(await openingLines(handle)).toEqual([
      'planner · recall similar failures, open the turn: instructions from --instructions',
      'coder · open the turn: instructions from --instructions',
      'tester · open the turn: instructions from --instructions',
    ]);
  });
});
