import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ACCEPTANCE_FILE,
  ACCEPTANCE_TEST,
  BUG_LINE,
  LARGE_FILE,
  LARGE_FILE_LINES,
  largeFileScenario,
  largeModule,
} from '../../bench/large-file-fixture';
import { loadScenarios, type Scenario } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');
const GREET = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n';

/** quick-pass with a Coder whose writing step streams slowly and, the first time, stalls. */
function streamedScenario(): Scenario {
  const base = loadScenarios(TEST_SCENARIOS).find((s) => s.name === 'quick-pass')!;
  const scenario = structuredClone(base);
  scenario.name = 'e2e-streamed';
  scenario.task = base.task!.replace('quick-pass', 'e2e-streamed');
  const [write, finish] = scenario.agents.coder![0];
  scenario.agents.coder = [
    [{ ...write, chunkDelayMs: 300, fault: { stallAfterChunks: 2, times: 1 } }, finish],
  ];
  return scenario;
}

describe('streamed steps and a fix in a 5,000-line file, end to end on the scripted model', () => {
  let h: Harness;
  let scratch: string;

  beforeAll(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-stream-e2e-'));
    const optionsFile = path.join(scratch, 'models.json');
    // A chunk every 300 ms keeps the stream alive; the stall's silence ends it after 1 s.
    fs.writeFileSync(
      optionsFile,
      JSON.stringify({ 'scripted:e2e-streamed': { stream: true, stream_idle_seconds: 1 } }),
    );
    h = await createHarness({
      scenarios: [streamedScenario(), largeFileScenario('e2e-large-edit', 'edit')],
      env: { ACA_MODEL_OPTIONS: optionsFile },
    });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const requestsOf = (scenario: string) => h.llm.requests.filter((r) => r.scenario === scenario);
  const toolAnswers = (messages: Array<{ role: string; content: unknown }>) =>
    messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(String(m.content)));

  test('a streamed run: a silent stream is given up and the step retried; the run succeeds', async () => {
    const handle = await h.start('e2e-streamed');
    const result = await h.result(handle);
    expect(result.state).toBe('SUCCESS');
    expect(fs.readFileSync(path.join(h.home, 'workspaces', handle.workflowId, 'greet.py'), 'utf8')).toBe(
      GREET,
    );
    const sent = requestsOf('e2e-streamed');
    expect(sent.every((r) => r.params.stream === true)).toBe(true);
    expect(sent.every((r) => (r.params.stream_options as { include_usage?: boolean }).include_usage)).toBe(
      true,
    );
    const writing = sent.filter((r) => r.agent === 'coder' && r.step === 0);
    expect(writing.map((r) => r.status)).toEqual(['dropped', 200]);
    // Streamed usage reaches the run's count: every answered request's, nothing of the dropped one.
    const answered = sent.filter((r) => r.status === 200);
    expect(result.tokens.prompt).toBe(answered.reduce((n, r) => n + r.usage!.prompt, 0));
    expect(result.tokens.completion).toBe(answered.reduce((n, r) => n + r.usage!.completion, 0));
  });

  test('a fix by edit_file in a 5,000-line file leaves every other line byte for byte', async () => {
    const id = `e2e-large-edit-${Date.now()}`;
    const workspace = path.join(h.home, 'workspaces', id);
    fs.mkdirSync(workspace, { recursive: true });
    const before = largeModule(false);
    fs.writeFileSync(path.join(workspace, LARGE_FILE), before);
    const testsDir = path.join(scratch, 'acceptance');
    fs.mkdirSync(testsDir, { recursive: true });
    fs.writeFileSync(path.join(testsDir, ACCEPTANCE_FILE), ACCEPTANCE_TEST);

    const result = await h.result(await h.start('e2e-large-edit', { id, testsDir }));
    expect(result.state).toBe('SUCCESS');
    expect(result.iterations).toBe(1);

    const after = fs.readFileSync(path.join(workspace, LARGE_FILE), 'utf8');
    const [was, is] = [before.split('\n'), after.split('\n')];
    expect(is).toHaveLength(was.length);
    const changed = is.flatMap((line, i) => (line === was[i] ? [] : [i + 1]));
    expect(changed).toEqual([BUG_LINE]);
    expect(is[BUG_LINE - 1]).toBe('    return scaled + 740');
    expect(after).toBe(largeModule(true));

    const coder = requestsOf('e2e-large-edit').filter((r) => r.agent === 'coder');
    const [read, edit] = toolAnswers(coder.at(-1)!.messages);
    expect(read).toMatchObject({
      ok: true,
      start_line: BUG_LINE - 10,
      end_line: BUG_LINE + 10,
      total_lines: LARGE_FILE_LINES,
      truncated: false,
    });
    expect(read.content.split('\n')).toHaveLength(22);
    expect(edit).toMatchObject({ ok: true, path: LARGE_FILE, replacements: 1 });
  });
});
