/**
 * run_command end to end with the scripted model: a Coder writes a wrong first version, runs the
 * acceptance test with run_command, gets the failure text back in the tool's answer, fixes the
 * code and the run ends SUCCESS. A worker with ACA_RUN_COMMAND=off offers the tool to no agent.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarioFile, type Scenario } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';

const scenario = (name: string): Scenario =>
  loadScenarioFile(path.resolve(__dirname, '..', 'scenarios', `${name}.json`));
const FIX = scenario('run-command-fix');

function testsFolder(s: Scenario): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-run-command-tests-'));
  for (const [file, text] of Object.entries(s.acceptanceTests ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** The JSON answers of the tool messages a recorded request carried, in order. */
function toolAnswers(request: {
  messages: Array<{ role: string; content: unknown }>;
}): Array<Record<string, unknown>> {
  return request.messages
    .filter((m) => m.role === 'tool')
    .map((m) => JSON.parse(String(m.content)) as Record<string, unknown>);
}

describe('run_command end to end', () => {
  const folders: string[] = [];
  afterAll(() => {
    for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('on a worker that offers it', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ scenarios: [FIX] });
      await h.startWorker();
    });
    afterAll(async () => {
      await h?.close();
    });

    test('the Coder runs the failing test, reads the failure, fixes the code: SUCCESS', async () => {
      const testsDir = testsFolder(FIX);
      folders.push(testsDir);
      const handle = await h.start('run-command-fix', { testsDir, maxIterations: 2 });
      const result = await h.result(handle);
      await h.recordHistory(handle, 'run-command-fix');
      expect(result.state).toBe('SUCCESS');
      expect(result.iterations).toBe(1);

      const coder = h.llm.requests.filter((r) => r.scenario === 'run-command-fix' && r.agent === 'coder');
      // Every agent is offered the tool.
      for (const request of h.llm.requests.filter((r) => r.scenario === 'run-command-fix')) {
        expect(request.tools).toContain('run_command');
      }
      // The third step's request carries the first command's answer: the test failed, and why.
      const afterFirstRun = toolAnswers(coder.find((r) => r.step === 2)!).at(-1)!;
      expect(afterFirstRun.ok).toBe(true);
      expect(afterFirstRun.exit_code).not.toBe(0);
      expect(afterFirstRun.timed_out).toBe(false);
      expect(String(afterFirstRun.stdout)).toMatch(/assert -1 == 5|AssertionError|1 failed/);
      // After the fix the same command passes.
      const afterSecondRun = toolAnswers(coder.find((r) => r.step === 4)!).at(-1)!;
      expect(afterSecondRun.exit_code).toBe(0);
      expect(String(afterSecondRun.stdout)).toMatch(/1 passed/);
      // The Web UI names each call with its command.
      const history = await handle.fetchHistory();
      const summaries = (history.events ?? [])
        .map((e) => e.userMetadata?.summary?.data)
        .filter((d): d is Uint8Array => d instanceof Uint8Array)
        .map((d) => Buffer.from(d).toString());
      expect(summaries.some((s) => s.includes('coder · run_command python3 -m pytest'))).toBe(true);
    });
  });

  describe('on a worker with ACA_RUN_COMMAND=off', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ scenarios: [scenario('quick-pass')], env: { ACA_RUN_COMMAND: 'off' } });
      await h.startWorker();
    });
    afterAll(async () => {
      await h?.close();
    });

    test('no agent is offered run_command', async () => {
      const result = await h.result(await h.start('quick-pass'));
      expect(result.state).toBe('SUCCESS');
      const requests = h.llm.requests.filter((r) => r.scenario === 'quick-pass');
      expect(new Set(requests.map((r) => r.agent))).toEqual(new Set(['planner', 'coder', 'tester']));
      for (const request of requests) expect(request.tools).not.toContain('run_command');
    });
  });
});
