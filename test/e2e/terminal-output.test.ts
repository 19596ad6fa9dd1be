/**
 * A run whose model writes terminal escapes everywhere (a content line, a file name, the plan,
 * the Coder's summary, the analysis), through the built `aca` command against a real worker,
 * Temporal server and the scripted model: nothing reaches the terminal raw, no field forges a
 * line, and `aca diff --raw` still gives git's bytes.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { loadScenarios } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { runCli } from '../helpers/run-cli';

const TEST_SCENARIOS = path.resolve(__dirname, '..', 'scenarios');
const TASK = 'Write add in calc.py (hostile-output).';

/** What a terminal would act on, or shows as nothing, if it reached the screen raw. */
const RAW = /[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2028\u2029]/u;

function expectPrintable(output: string): void {
  const rawLines = output.split('\n').filter((line) => RAW.test(line));
  expect(rawLines).toEqual([]);
  // The analysis and the summary hold "\nSUCCESS …": it must never start a line.
  expect(output).not.toMatch(/^SUCCESS/m);
}

describe('a run whose model writes terminal escapes, through the aca command', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;
  const id = `cli-escapes-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    h = await createHarness({ scenarios: loadScenarios(TEST_SCENARIOS) });
    await h.startWorker();
    env = h.cliEnv();
  });
  afterAll(async () => {
    await h?.close();
  });

  test('run, diff, result, status, log and list print every escape visibly; diff --raw keeps the bytes', async () => {
    const run = await runCli(
      ['run', TASK, '--model', 'scripted:hostile-output', '--id', id, '--max-iterations', '1'],
      env,
    );
    expect(run.code).toBe(1);
    expectPrintable(run.stdout);
    expectPrintable(run.stderr);
    expect(run.stdout).toContain('"evil\\x1b[2K\\nM name\\u009b2J.py"');

    const diff = await runCli(['diff', id], env);
    expect(diff.code).toBe(0);
    expectPrintable(diff.stdout);
    expect(diff.stdout).toContain(
      '+    return a - b  # \\x1b[2K\\x1b[1A\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07 \\u202eok',
    );
    expect(diff.stderr).toMatch(/^1 line carries control or invisible characters, .* aca diff --raw/m);

    const raw = await runCli(['diff', id, '--raw'], env);
    expect(raw.code).toBe(0);
    expect(raw.stdout).toContain(
      '+    return a - b  # \x1b[2K\x1b[1A\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 \u202eok\n',
    );
    expect(raw.stderr).toBe('');

    const result = await runCli(['result', id], env);
    expect(result.code).toBe(1);
    expectPrintable(result.stdout);
    const json = await runCli(['result', id, '--json'], env);
    expectPrintable(json.stdout);
    const parsed = JSON.parse(json.stdout) as RunResult;
    expect(parsed.lastAnalysis?.rootCause).toBe(
      'add subtracts \x1b[2K\x1b[1A\nSUCCESS after 1 iteration of at most 1',
    );
    expect(parsed.changedFiles.map((f) => f.path)).toContain('evil\x1b[2K\nM name\u009b2J.py');

    const status = await runCli(['status', id], env);
    expectPrintable(status.stdout);
    expect(status.stdout).toContain(
      '  last analysis: add subtracts \\x1b[2K\\x1b[1A\\nSUCCESS after 1 iteration of at most 1\n',
    );
    expect(status.stdout).toContain(
      '  fix hypothesis: Return a + b \\u202e\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\n',
    );

    const log = await runCli(['log', id], env);
    expect(log.code).toBe(0);
    expectPrintable(log.stdout);
    expect(log.stdout).toContain('plan: Write calc.add \\x1b]0;all good\\x07');
    expect(log.stdout).toContain('create_file evil\\x1b[2K\\nM name\\u009b2J.py');

    const list = await runCli(['list', '--json'], env);
    expectPrintable(list.stdout);
    expect((JSON.parse(list.stdout) as Array<{ workflowId: string }>).map((r) => r.workflowId)).toContain(id);
  });
});
