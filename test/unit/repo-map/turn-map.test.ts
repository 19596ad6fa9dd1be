/**
 * The repository map where it is used: a turn opens, with the sources the openTurn activity gives
 * it, on a generated repository of 20,000 files, and the model (the scripted OpenAI-compatible
 * server) receives the map in the first user message. Activity level (MockActivityEnvironment, a
 * real conversation store, a real HTTP model server), not a Temporal run: the map is built
 * entirely inside the activity's sources, which is what is exercised here.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { BUILTIN_PRICES } from '../../../src/llm/model-prices';
import { createAgentActivities, turnSources } from '../../../src/activities/agent-activities';
import { FileReportStore } from '../../../src/store/report-store';
import { openTurn, type OpenTurnInput } from '../../../src/agents/agent-turn';
import { FileConversationStore, type StepDecision } from '../../../src/store/conversation-store';
import { generateRepository } from '../../../bench/search-bench';
import { createOpenAIChatModel } from '../../../src/llm/chat-model';
import type { Scenario } from '../../../src/llm/scenario';
import { ScriptedLlmServer } from '../../../src/llm/scripted-server';
import { estimateTokens } from '../../../src/repo-map/repo-map';
import { buildTurnMap } from '../../../src/repo-map/turn-map';
import type { AgentRole, Lesson } from '../../../src/shared/types';

const TASK = 'parse_invoice drops the last line item of a multi-page invoice; fix it.';

const scenario: Scenario = {
  name: 'map-planner',
  task: TASK,
  agents: {
    planner: [
      [
        {
          tool_calls: [
            {
              name: 'submit_plan',
              arguments: {
                summary: 'Keep the last line item when an invoice spans pages',
                steps: ['Fix the page loop in parse_invoice', 'Add a test with two pages'],
                files: ['billing/invoice.py', 'billing/tests/test_invoice.py'],
              },
            },
          ],
        },
      ],
    ],
  },
};

/** The map section of a first user message: from its heading to the closing instruction. */
function mapSection(message: string): string | null {
  const start = message.indexOf('Repository map');
  if (start < 0) return null;
  const end = message.indexOf('\n\n', start);
  return message.slice(start, end < 0 ? undefined : end);
}

function turnInput(ref: string, workspace: string, role: AgentRole, extra: object = {}): OpenTurnInput {
  return {
    ref,
    model: 'scripted:map-planner',
    workspace,
    context: {
      role,
      task: TASK,
      language: 'python',
      attempt: 1,
      maxIterations: 3,
      protectedPaths: [],
      ...extra,
    },
  };
}

const noSources = { loadReport: async () => null, recallLessons: async (): Promise<Lesson[]> => [] };

describe('the repository map in an opening turn, on a repository of 20,000 files', () => {
  let root: string;
  let workspace: string;
  let llm: ScriptedLlmServer;

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-turn-map-'));
    workspace = path.join(root, 'ws');
    fs.mkdirSync(workspace);
    await generateRepository(workspace, 20_000);
    fs.mkdirSync(path.join(workspace, 'billing', 'tests'), { recursive: true });
    fs.writeFileSync(
      path.join(workspace, 'billing', 'invoice.py'),
      'class Invoice:\n    pass\n\n\ndef parse_invoice(text):\n    return Invoice()\n\n\ndef _page_lines(page):\n    return []\n',
    );
    fs.writeFileSync(
      path.join(workspace, 'billing', 'tests', 'test_invoice.py'),
      'def test_one_page():\n    pass\n',
    );
    llm = await new ScriptedLlmServer({ scenarios: [scenario] }).start();
  }, 120_000);
  afterAll(async () => {
    await llm.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test("the Planner's first message, as the model receives it, holds the map within its budget", async () => {
    const store = new FileConversationStore(path.join(root, 'runs'));
    const lines: string[] = [];
    const logger = new DefaultLogger('INFO', (entry) =>
      lines.push(`${entry.message} ${JSON.stringify(entry.meta ?? {})}`),
    );
    const deps = {
      store,
      reports: new FileReportStore(path.join(root, 'runs')),
      chatModel: createOpenAIChatModel({ baseURL: llm.url }),
      recallLessons: noSources.recallLessons,
      logPrompts: false,
      prices: BUILTIN_PRICES,
    };
    const activities = createAgentActivities(deps);
    const env = new MockActivityEnvironment({}, { logger });
    const open = turnInput('run-1/planner', workspace, 'planner');
    // The turn opens with the sources the openTurn activity gives it, as on a run's host.
    await env.run(() => openTurn(store, open, turnSources(deps)));
    const decision: StepDecision = await env.run(activities.agentStep, {
      ref: open.ref,
      model: open.model,
      stepIndex: 0,
      timeoutMs: 10_000,
    });
    expect(decision.finished?.tool).toBe('submit_plan');

    const sent = llm.requests.filter((r) => r.agent === 'planner');
    expect(sent).toHaveLength(1);
    const userMessage = String(sent[0].messages.find((m) => m.role === 'user')?.content);
    const map = mapSection(userMessage);
    expect(map).not.toBeNull();
    expect(map).toMatch(/^Repository map \(20003 files;/);
    expect(estimateTokens(map!)).toBeLessThanOrEqual(2000);
    // The relevant file comes with its definitions, its test next to it.
    expect(map).toContain(
      'billing/\n  tests/\n    test_invoice.py: def test_one_page\n  invoice.py: def parse_invoice, class Invoice, def _page_lines',
    );
    expect(map).toMatch(/\.\.\.|… \d+ more files/);
    // The map sits between the task and the closing instruction.
    expect(userMessage.indexOf(TASK)).toBeLessThan(userMessage.indexOf('Repository map'));
    expect(userMessage.endsWith('Submit your plan with submit_plan.')).toBe(true);
    // What the model got is what the conversation stored.
    const stored = await store.load(open.ref);
    expect(stored.entries[1]).toEqual({ kind: 'user', content: userMessage });
    const built = lines.find((l) => l.startsWith('repository map '));
    expect(built).toMatch(/"role":"planner"/);
    const ms = Number(/"ms":(\d+)/.exec(built!)?.[1]);
    process.stderr.write(`repository map of 20,003 files for the Planner built in ${ms} ms\n`);
    expect(ms).toBeLessThan(10_000);
  });

  test('a retried opening reuses the stored map, even when the workspace changed since', async () => {
    const store = new FileConversationStore(path.join(root, 'runs-retry'));
    let built = 0;
    const sources = {
      ...noSources,
      repositoryMap: async (request: Parameters<typeof buildTurnMap>[0]) => {
        built++;
        return buildTurnMap(request);
      },
    };
    const open = turnInput('run-2/planner', workspace, 'planner');
    await openTurn(store, open, sources);
    const first = (await store.load(open.ref)).entries[1];
    fs.writeFileSync(
      path.join(workspace, 'billing', 'invoice_pages.py'),
      'def split_invoice_pages():\n    pass\n',
    );
    try {
      await openTurn(store, open, sources);
      expect((await store.load(open.ref)).entries[1]).toEqual(first);
      expect(built).toBe(1);
    } finally {
      fs.rmSync(path.join(workspace, 'billing', 'invoice_pages.py'));
    }
  });

  test('the Tester gets the part relevant to the plan the Planner stored, in the smaller budget', async () => {
    const store = new FileConversationStore(path.join(root, 'runs'));
    // run-1/planner holds the submitted plan (first test); the Tester's context carries none.
    const open = turnInput('run-1/tester-1', workspace, 'tester', { testPass: 1 });
    await openTurn(store, open, { ...noSources, repositoryMap: (r) => buildTurnMap(r) });
    const message = (await store.load(open.ref)).entries[1];
    const map = mapSection(message.kind === 'user' ? message.content : '');
    expect(map).toMatch(/^Repository map, the part relevant to the plan \(20003 files;/);
    expect(estimateTokens(map!)).toBeLessThanOrEqual(1000);
    expect(map).toContain('test_invoice.py: def test_one_page');
    expect(map).toContain('invoice.py: def parse_invoice');
    // Nothing of the 20,000 unrelated modules is listed by name.
    expect(map).not.toMatch(/module_\d+\.py/);
    expect(map).toContain('src/ (20000 files)');
  });

  test('the Coder ranks by the plan in its context; a map that cannot be built leaves it out', async () => {
    const store = new FileConversationStore(path.join(root, 'runs-coder'));
    const plan = {
      summary: 'Fix the tax rounding',
      steps: ['Round half up'],
      files: ['src/pkg3/module_300.py'],
    };
    const open = turnInput('run-3/coder-1', workspace, 'coder', { plan });
    await openTurn(store, open, { ...noSources, repositoryMap: (r) => buildTurnMap(r) });
    const message = (await store.load(open.ref)).entries[1];
    const map = mapSection(message.kind === 'user' ? message.content : '')!;
    expect(map.split('\n').find((l) => l.includes('module_300.py'))).toMatch(
      /^\s+module_300\.py: def function_0_300/,
    );
    // From attempt 2, the files the analysis names rank with the plan's.
    const analysis = {
      rootCause: 'rounding happens before the sum',
      fixHypothesis: 'round once',
      filesToChange: ['src/pkg7/module_777.py'],
      testsWrong: false,
    };
    const second = turnInput('run-3/coder-2', workspace, 'coder', { plan, analysis, attempt: 2 });
    await openTurn(store, second, { ...noSources, repositoryMap: (r) => buildTurnMap(r) });
    const next = (await store.load(second.ref)).entries[1];
    const nextMap = mapSection(next.kind === 'user' ? next.content : '')!;
    expect(nextMap).toMatch(/\n\s+module_300\.py: def function_0_300/);
    expect(nextMap).toMatch(/\n\s+module_777\.py: def function_0_777/);
    expect(map).not.toContain('module_777.py');

    const deps = {
      store,
      reports: new FileReportStore(path.join(root, 'runs-coder')),
      chatModel: createOpenAIChatModel({ baseURL: llm.url }),
      recallLessons: noSources.recallLessons,
      logPrompts: false,
      prices: BUILTIN_PRICES,
    };
    const gone = turnInput('run-4/planner', path.join(root, 'no-such-workspace'), 'planner');
    const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
    await env.run(() => openTurn(store, gone, turnSources(deps)));
    const opened = (await store.load(gone.ref)).entries[1];
    expect(opened.kind === 'user' && opened.content).toMatch(/^Task:\n/);
    expect(opened.kind === 'user' && opened.content).not.toContain('Repository map');
  });
});
