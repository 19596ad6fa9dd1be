/**
 * The repository map end to end: a scripted run on a real Temporal dev server whose workspace
 * holds a generated repository of 20,000 files. The scripted model server records every request,
 * so the test reads each agent's first message as the model received it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateRepository } from '../../bench/search-bench';
import type { Scenario } from '../../src/llm/scenario';
import { estimateTokens } from '../../src/repo-map/repo-map';
import type { AgentRole } from '../../src/shared/types';
import { createHarness, type Harness } from '../helpers/agent-harness';

const TASK = 'parse_invoice drops the last line item of a multi-page invoice; fix it.';

const scenario: Scenario = {
  name: 'repo-map-run',
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
                steps: ['Fix the page loop in parse_invoice'],
                files: ['billing/invoice.py'],
              },
            },
          ],
        },
      ],
    ],
    coder: [[{ tool_calls: [{ name: 'finish', arguments: { summary: 'nothing changed' } }] }]],
    tester: [
      [{ tool_calls: [{ name: 'finish', arguments: { summary: 'the existing test reproduces it' } }] }],
    ],
    reflector: [
      [
        {
          tool_calls: [
            {
              name: 'submit_analysis',
              arguments: {
                root_cause: 'the page loop stops one item early',
                fix_hypothesis: 'iterate to the end of the last page',
                files_to_change: ['billing/invoice.py'],
                tests_wrong: false,
              },
            },
          ],
        },
      ],
    ],
  },
};

/** The map section of a first user message: from its heading to the next blank line. */
function mapSection(message: string): string | null {
  const start = message.indexOf('Repository map');
  if (start < 0) return null;
  const end = message.indexOf('\n\n', start);
  return message.slice(start, end < 0 ? undefined : end);
}

describe('the repository map in a scripted run', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness({ scenarios: [scenario] });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
  });

  test("every agent's first message holds a map within its budget; the Planner's shows the relevant definitions", async () => {
    const id = `repo-map-${Date.now()}`;
    const workspace = path.join(h.home, 'workspaces', id);
    fs.mkdirSync(workspace, { recursive: true });
    await generateRepository(workspace, 20_000);
    // The generator makes a repository of its own; the run keeps its commits elsewhere.
    fs.rmSync(path.join(workspace, '.git'), { recursive: true, force: true });
    fs.mkdirSync(path.join(workspace, 'billing', 'tests'), { recursive: true });
    fs.writeFileSync(
      path.join(workspace, 'billing', 'invoice.py'),
      'class Invoice:\n    pass\n\n\ndef parse_invoice(text):\n    return Invoice()\n',
    );
    fs.writeFileSync(
      path.join(workspace, 'billing', 'tests', 'test_invoice.py'),
      'def test_last_line_item():\n    assert False, "the last line item is lost"\n',
    );

    const handle = await h.start('repo-map-run', { id, maxIterations: 1, warnAt: 1 });
    const result = await h.result(handle);
    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('max_iterations');

    const firstMessage = (agent: AgentRole) => {
      const request = h.llm.requests.find((r) => r.scenario === 'repo-map-run' && r.agent === agent);
      return String(request?.messages.find((m) => m.role === 'user')?.content);
    };
    const planner = mapSection(firstMessage('planner'));
    expect(planner).toMatch(/^Repository map \(20003 files;/);
    expect(estimateTokens(planner!)).toBeLessThanOrEqual(2000);
    expect(planner).toContain('  invoice.py: def parse_invoice, class Invoice');
    expect(planner).toContain('test_invoice.py: def test_last_line_item');

    for (const agent of ['coder', 'tester', 'reflector'] as const) {
      const map = mapSection(firstMessage(agent));
      expect(map).toMatch(/^Repository map, the part relevant to the plan/);
      expect(estimateTokens(map!)).toBeLessThanOrEqual(1000);
      expect(map).toContain('invoice.py: def parse_invoice, class Invoice');
      expect(map).not.toMatch(/module_\d+\.py/);
    }
    // The map lives in the conversations, not in workflow history.
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history).not.toContain('Repository map');
    expect(history).not.toContain('def parse_invoice');
  });
});
