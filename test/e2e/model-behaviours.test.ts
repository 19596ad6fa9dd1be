import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarios, type Scenario, type ScenarioStep } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');
const GREET = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n';
const writeGreet: ScenarioStep = {
  tool_calls: [{ name: 'create_file', arguments: { path: 'greet.py', content: GREET } }],
};
const finish: ScenarioStep = { tool_calls: [{ name: 'finish', arguments: { summary: 'Wrote greet.py' } }] };
/** A Python file of comments only, so the test run does not care about it. */
const bulky = (tag: string, lines: number) =>
  Array.from({ length: lines }, (_, i) => `# ${tag} line ${i + 1}: ${'z'.repeat(50)}`).join('\n') + '\n';
const reads = (...files: string[]): ScenarioStep[] =>
  files.map((file) => ({ tool_calls: [{ name: 'read_file', arguments: { path: file } }] }));

/** quick-pass (plan, write greet.py, two tests) with the Coder's turn replaced. */
function variant(
  name: string,
  coder: ScenarioStep[],
  change: (s: Scenario) => void = () => undefined,
): Scenario {
  const base = loadScenarios(TEST_SCENARIOS).find((s) => s.name === 'quick-pass')!;
  const scenario = structuredClone(base);
  scenario.name = name;
  scenario.task = base.task!.replace('quick-pass', name);
  scenario.agents.coder = [coder];
  change(scenario);
  return scenario;
}

const SCENARIOS: Scenario[] = [
  variant('e2e-context-400', [
    ...reads('one.py', 'two.py'),
    // Serves only requests up to 30000 chars: the first ask of this step is refused.
    { ...writeGreet, context_limit_chars: 30_000 },
    finish,
  ]),
  variant('e2e-cut-answer', [
    {
      finish_reason: 'length',
      tool_calls: [{ name: 'create_file', arguments: { path: 'big.py', content: bulky('big', 400) } }],
    },
    writeGreet,
    finish,
  ]),
  variant(
    'e2e-text-calls',
    [
      { content: 'I will write greet.py.', tool_calls_as_text: 'tags', tool_calls: writeGreet.tool_calls },
      { tool_calls_as_text: 'fenced', tool_calls: finish.tool_calls },
    ],
    (s) => {
      s.agents.planner![0][0].tool_calls_as_text = 'json';
    },
  ),
  variant(
    'e2e-outgrows',
    // Every step is served only while its request stays within what the options file says fits.
    [...reads('a.py', 'b.py', 'c.py', 'd.py', 'e.py'), writeGreet, finish].map((step) => ({
      ...step,
      context_limit_chars: 30_000,
    })),
  ),
];

describe('models as they behave, end to end on the scripted model', () => {
  let h: Harness;
  let optionsFile: string;

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-model-options-'));
    optionsFile = path.join(dir, 'models.json');
    // 8192 tokens, 2048 kept for the answer: about 18000 chars of prompt by aca's estimate.
    // e2e-text-calls: a model served without a tool parser, which the options say writes calls as text.
    fs.writeFileSync(
      optionsFile,
      JSON.stringify({
        'scripted:e2e-outgrows': { context_tokens: 8192 },
        'scripted:e2e-text-calls': { text_tool_calls: true },
      }),
    );
    h = await createHarness({ scenarios: SCENARIOS, env: { ACA_MODEL_OPTIONS: optionsFile } });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
  });

  const coderRequests = (scenario: string) =>
    h.llm.requests.filter((r) => r.scenario === scenario && r.agent === 'coder');
  const toolAnswers = (messages: Array<{ role: string; content: unknown }>) =>
    messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(String(m.content)));
  /** A workspace made before the run starts, with files for the Coder to read. */
  const workspaceWith = (id: string, files: Record<string, string>) => {
    const workspace = path.join(h.home, 'workspaces', id);
    fs.mkdirSync(workspace, { recursive: true });
    for (const [file, content] of Object.entries(files))
      fs.writeFileSync(path.join(workspace, file), content);
    return workspace;
  };

  test('a context-length 400 survived', async () => {
    const id = `e2e-context-400-${Date.now()}`;
    workspaceWith(id, { 'one.py': bulky('one', 300), 'two.py': bulky('two', 300) });
    const result = await h.result(await h.start('e2e-context-400', { id }));
    expect(result.state).toBe('SUCCESS');
    const third = coderRequests('e2e-context-400').filter((r) => r.step === 2);
    expect(third.map((r) => r.status)).toEqual([400, 200]);
    const [oldest, latest] = toolAnswers(third[1].messages);
    expect(oldest).toEqual({
      ok: true,
      trimmed: expect.stringMatching(/^read_file one\.py lines 1-300 of 300/),
    });
    expect(latest.content).toContain('two line 300');
  });

  test('a cut answer survived', async () => {
    const handle = await h.start('e2e-cut-answer');
    const result = await h.result(handle);
    expect(result.state).toBe('SUCCESS');
    const workspace = path.join(h.home, 'workspaces', handle.workflowId);
    expect(fs.existsSync(path.join(workspace, 'big.py'))).toBe(false);
    expect(fs.readFileSync(path.join(workspace, 'greet.py'), 'utf8')).toBe(GREET);
    const second = coderRequests('e2e-cut-answer').find((r) => r.step === 1)!;
    expect(toolAnswers(second.messages)).toEqual([
      { ok: false, error: expect.stringMatching(/cut at its output limit.*edit_file.*smaller pieces/) },
    ]);
  });

  test('a text tool call executed', async () => {
    const handle = await h.start('e2e-text-calls');
    const result = await h.result(handle);
    expect(result.state).toBe('SUCCESS');
    expect(fs.readFileSync(path.join(h.home, 'workspaces', handle.workflowId, 'greet.py'), 'utf8')).toBe(
      GREET,
    );
    const second = coderRequests('e2e-text-calls').find((r) => r.step === 1)!;
    expect(toolAnswers(second.messages)).toEqual([{ ok: true, path: 'greet.py', bytes: GREET.length }]);
  });

  test('a turn whose conversation outgrows its budget finishes', async () => {
    const id = `e2e-outgrows-${Date.now()}`;
    const files = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((f) => [`${f}.py`, bulky(f, 120)]));
    workspaceWith(id, files);
    const result = await h.result(await h.start('e2e-outgrows', { id }));
    expect(result.state).toBe('SUCCESS');
    const coder = coderRequests('e2e-outgrows');
    expect(coder.map((r) => r.status)).toEqual(coder.map(() => 200));
    expect(coder).toHaveLength(7);
    // Whole, the last request would hold all five files (over 40000 chars); it was sent trimmed.
    expect(Math.max(...coder.map((r) => r.chars))).toBeLessThanOrEqual(30_000);
    const answers = toolAnswers(coder.at(-1)!.messages);
    expect(answers.filter((a) => typeof a.trimmed === 'string').length).toBeGreaterThanOrEqual(3);
    expect(answers.at(-1)).toMatchObject({ ok: true, path: 'greet.py' });
  });
});
