/**
 * Which tools a turn's model is offered (its role's, run_command where allowed, the MCP tools the
 * opening worker has) and how a step sorts the calls it gets: file tools, run_command and MCP
 * calls each decided with where they run; calls of tools not offered answered and never run.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { turnSources, type AgentActivityDeps } from '../../../src/activities/agent-activities';
import { openTurn, runAgentStep } from '../../../src/agents/agent-turn';
import { turnTools } from '../../../src/agents/offered-tools';
import { createOpenAIChatModel } from '../../../src/llm/chat-model';
import type { Scenario } from '../../../src/llm/scenario';
import { ScriptedLlmServer } from '../../../src/llm/scripted-server';
import { FileConversationStore, type OfferedMcpTool } from '../../../src/store/conversation-store';
import type { AgentRole, Lesson } from '../../../src/shared/types';

const lookup: OfferedMcpTool = {
  name: 'mcp__docs__lookup',
  server: 'docs',
  tool: 'lookup',
  description: 'Looks a word up',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
};
/** A server tool named like one of aca's own: never offered in its place. */
const shadow: OfferedMcpTool = { ...lookup, name: 'read_file', tool: 'read_file' };

const scenario: Scenario = {
  name: 'offered-tools',
  task: 'Use the tools (offered-tools)',
  agents: {
    coder: [
      [
        {
          tool_calls: [
            {
              name: 'run_command',
              arguments: { command: 'python3 -m pytest -q tests/test_a.py', timeout_seconds: 30 },
            },
            { name: 'run_command', arguments: { command: '' } },
            { name: 'run_command', arguments: { command: 'true', shell: 'zsh' } },
            { name: 'mcp__docs__lookup', arguments: { word: 'fizz' } },
            { name: 'mcp__docs__lookup', arguments: '[1, 2]' },
            { name: 'mcp__other__tool', arguments: {} },
            { name: 'read_file', arguments: { path: 'a.py' } },
            { name: 'read_file', arguments: { path: 'x\u001b]0;pwned\u0007\u202eyp.py' } },
          ],
        },
      ],
    ],
  },
};

const sources = (mcp: OfferedMcpTool[], runCommand?: boolean, readOnlyCommands?: boolean) => ({
  loadReport: async () => null,
  recallLessons: async (): Promise<Lesson[]> => [],
  mcpTools: (role: AgentRole) => (role === 'coder' || role === 'reflector' ? mcp : []),
  ...(runCommand === undefined ? {} : { runCommand }),
  ...(readOnlyCommands === undefined ? {} : { readOnlyCommands }),
});

function opening(ref: string, workspace: string, role: AgentRole, runCommand?: boolean) {
  return {
    ref,
    model: 'scripted:offered-tools',
    workspace,
    context: {
      role,
      task: 'Use the tools (offered-tools)',
      language: 'python' as const,
      attempt: 1,
      maxIterations: 3,
      protectedPaths: [],
    },
    ...(runCommand === undefined ? {} : { runCommand }),
  };
}

describe('the tools a turn is offered', () => {
  let llm: ScriptedLlmServer;
  let root: string;
  let store: FileConversationStore;

  beforeAll(async () => {
    llm = await new ScriptedLlmServer({ scenarios: [scenario] }).start();
  });
  afterAll(async () => {
    await llm.stop();
  });
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-offered-'));
    store = new FileConversationStore(path.join(root, 'runs'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test.each([
    ['the run and the worker allow it', undefined, undefined, true],
    ["the run's .aca.json says no", false, undefined, false],
    ['the worker says no (ACA_RUN_COMMAND=off)', undefined, false, false],
  ])('run_command when %s', async (_what, runAllows, workerAllows, offered) => {
    for (const role of ['planner', 'coder', 'tester', 'reflector'] as const) {
      const ref = await openTurn(
        store,
        opening(`r/${role}`, root, role, runAllows),
        sources([], workerAllows),
      );
      expect(turnTools(await store.load(ref)).names.includes('run_command')).toBe(offered);
    }
  });

  // A Planner's and a Reflector's commands see the work tree read-only, which only a sandbox can
  // hold them to: offered without one, their commands could change the work tree.
  test('on a worker without a sandbox, run_command goes only to the roles whose commands may write', async () => {
    const offered: Record<string, boolean> = {};
    for (const role of ['planner', 'coder', 'tester', 'reflector'] as const) {
      const ref = await openTurn(store, opening(`r/${role}`, root, role), sources([], undefined, false));
      offered[role] = turnTools(await store.load(ref)).names.includes('run_command');
    }
    expect(offered).toEqual({ planner: false, coder: true, tester: true, reflector: false });
  });

  test("a worker says it has no sandbox to its turns' openings (ACA_SANDBOX=none)", () => {
    const deps = { reports: {}, recallLessons: async () => [] } as unknown as AgentActivityDeps;
    expect(turnSources({ ...deps, sandboxMode: 'none' }).readOnlyCommands).toBe(false);
    expect(turnSources({ ...deps, sandboxMode: 'bwrap' }).readOnlyCommands).toBeUndefined();
  });

  test('MCP tools go to the roles the opening worker offers them to, after aca own tools, never in their place', async () => {
    const mcp = [lookup, shadow];
    const coder = turnTools(
      await store.load(await openTurn(store, opening('r/c', root, 'coder'), sources(mcp))),
    );
    expect(coder.names).toEqual([
      'list_files',
      'read_file',
      'search_files',
      'create_file',
      'edit_file',
      'delete_file',
      'run_command',
      'finish',
      'mcp__docs__lookup',
    ]);
    expect(coder.definitions.at(-1)).toEqual({
      type: 'function',
      function: { name: 'mcp__docs__lookup', description: 'Looks a word up', parameters: lookup.parameters },
    });
    const planner = turnTools(
      await store.load(await openTurn(store, opening('r/p', root, 'planner'), sources(mcp))),
    );
    expect(planner.names).toEqual(['list_files', 'read_file', 'search_files', 'run_command', 'submit_plan']);
  });

  test('a step decides each call with where it runs; bad ones are answered at once', async () => {
    const model = createOpenAIChatModel({ baseURL: llm.url, timeoutMs: 5000 });
    const ref = await openTurn(store, opening('r/coder-1', root, 'coder'), sources([lookup]));
    const step = await runAgentStep(store, model, ref, 0);
    expect(step.toolCalls.map(({ id: _id, ...call }) => call)).toEqual([
      { kind: 'command', name: 'run_command', target: 'python3 -m pytest -q tests/test_a.py' },
      { kind: 'mcp', name: 'mcp__docs__lookup', target: '', server: 'docs' },
      { kind: 'file', name: 'read_file', target: 'a.py' },
      { kind: 'file', name: 'read_file', target: expect.stringMatching(/^x.*pwned.*yp\.py$/) },
    ]);
    // A target is the step's summary in history, shown by the Web UI as it is.
    expect(step.toolCalls.at(-1)!.target).not.toMatch(/[\u001b\u0007\u202e]/);
    const answers = (await store.load(ref)).toolResults;
    const refused = Object.values(answers).map((a) => (a.ok ? 'ok' : a.error));
    expect(refused).toEqual([
      expect.stringMatching(/schema of run_command: command/),
      expect.stringMatching(/schema of run_command: .*shell/),
      'arguments must be a JSON object',
      expect.stringMatching(/unknown tool "mcp__other__tool".*mcp__docs__lookup/),
    ]);
    // The tools offered are what the model was sent.
    const request = llm.requests.find((r) => r.scenario === 'offered-tools')!;
    expect(request.tools).toContain('run_command');
    expect(request.tools).toContain('mcp__docs__lookup');
  });
});
