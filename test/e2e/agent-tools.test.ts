/**
 * The agents' command and MCP tools end to end with the scripted model. A Coder writes a wrong
 * first version, runs the acceptance test with run_command, gets the failure text back in the
 * tool's answer, fixes the code and the run ends SUCCESS. On a worker with ACA_RUN_COMMAND=off and
 * two MCP servers (one that cannot start, one whose slow tool crashes mid-call once), the Coder
 * uses the MCP tools (one answer over the bound reaches it as an error, the call made once) and no
 * agent is offered run_command.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Scenario } from '../../src/llm/scenario';
import { MCP_TEST_SERVER } from '../helpers/mcp-test-config';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { acceptanceTestsFolder, testScenario } from '../helpers/scenario-files';

const FIX = testScenario('run-command-fix');

/** The JSON answers of the tool messages a recorded request carried, in order. */
function toolAnswers(request: {
  messages: Array<{ role: string; content: unknown }>;
}): Array<Record<string, unknown>> {
  return request.messages
    .filter((m) => m.role === 'tool')
    .map((m) => JSON.parse(String(m.content)) as Record<string, unknown>);
}

describe('agent tools end to end', () => {
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
      const testsDir = acceptanceTestsFolder(FIX);
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

  describe('on a worker with MCP servers and ACA_RUN_COMMAND=off', () => {
    let h: Harness;
    let dir: string;
    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-mcp-e2e-'));
      folders.push(dir);
      const server = (env: Record<string, string>) => ({
        command: process.execPath,
        args: [MCP_TEST_SERVER],
        env,
      });
      const configFile = path.join(dir, 'mcp.json');
      fs.writeFileSync(
        configFile,
        JSON.stringify({
          mcpServers: {
            kb: server({
              MCP_TEST_CRASH_ONCE: path.join(dir, 'crashed'),
              MCP_TEST_CALL_LOG: path.join(dir, 'calls'),
            }),
            broken: server({ MCP_TEST_EXIT_AT_START: '3' }),
          },
        }),
      );
      h = await createHarness({
        scenarios: [testScenario('quick-pass'), MCP_SCENARIO],
        env: { ACA_RUN_COMMAND: 'off', ACA_MCP_CONFIG: configFile },
      });
      await h.startWorker();
    });
    afterAll(async () => {
      await h?.close();
    });

    test("the Coder uses the server's tools; a crash mid-call is retried once; the run goes on: SUCCESS", async () => {
      const handle = await h.start('mcp-tool');
      const result = await h.result(handle);
      await h.recordHistory(handle, 'mcp-tool');
      expect(result.state).toBe('SUCCESS');
      const requests = h.llm.requests.filter((r) => r.scenario === 'mcp-tool');
      const coder = requests.filter((r) => r.agent === 'coder');
      // The Coder is offered the tools of the server that started, the Planner none (default roles).
      expect(coder[0]!.tools).toEqual(expect.arrayContaining(['mcp__kb__lookup', 'mcp__kb__slow_sum']));
      expect(coder[0]!.tools.some((t) => t.startsWith('mcp__broken'))).toBe(false);
      expect(requests.find((r) => r.agent === 'planner')!.tools.some((t) => t.startsWith('mcp__'))).toBe(
        false,
      );
      // The answers reached the model: the sum after the server's crash and restart, the text
      // without its terminal escapes.
      const [sum, looked] = toolAnswers(coder[1]!);
      expect(sum).toMatchObject({ ok: true });
      expect(JSON.stringify(sum)).toContain('5');
      expect(JSON.stringify(looked)).toContain('RED');
      expect(JSON.stringify(looked)).not.toMatch(/\\u001b|\u001b/);
      // An answer over 4 MiB reached the model as an error, once: not retried as a server down.
      const huge = toolAnswers(coder[2]!).at(-1)!;
      expect(huge).toMatchObject({ ok: false, error: expect.stringMatching(/over 4 MiB.*Ask it for less/) });
      // The server saw the slow call twice (the crash, then the retry) and each lookup once.
      const calls = fs.readFileSync(path.join(dir, 'calls'), 'utf8').trim().split('\n');
      expect(calls.filter((c) => c.startsWith('slow_sum'))).toHaveLength(2);
      expect(calls.filter((c) => c.startsWith('lookup'))).toHaveLength(2);
      expect(calls.filter((c) => c.includes('huge'))).toHaveLength(1);
      // No agent is offered run_command on this worker.
      for (const request of requests) expect(request.tools).not.toContain('run_command');
    });
  });
});

/** quick-pass, with a Coder that asks the MCP server first. */
const MCP_SCENARIO: Scenario = (() => {
  const base = testScenario('quick-pass');
  const coderTurn = base.agents.coder![0]!;
  return {
    ...base,
    name: 'mcp-tool',
    task: `${base.task} (mcp-tool)`,
    agents: {
      ...base.agents,
      coder: [
        [
          {
            tool_calls: [
              { name: 'mcp__kb__slow_sum', arguments: { a: 2, b: 3, delay_ms: 100 } },
              { name: 'mcp__kb__lookup', arguments: { key: 'escapes' } },
            ],
          },
          // A step of its own: over stdio, every call waiting when a line over the bound comes is
          // answered as too large.
          { tool_calls: [{ name: 'mcp__kb__lookup', arguments: { key: 'huge' } }] },
          ...coderTurn,
        ],
      ],
    },
  };
})();
