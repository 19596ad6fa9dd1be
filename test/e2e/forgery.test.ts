/**
 * A Coder that cannot solve the task and forges the results instead, end to end: the run must
 * end FAILED at its limit, the Reflector must be told why, and the user's acceptance test must
 * be byte for byte what the user gave, in the workspace and in the --tests folder.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarioFile } from '../../src/llm/scenario';
import { createHarness, type Harness } from '../helpers/agent-harness';

const SCENARIO = loadScenarioFile(path.resolve(__dirname, '..', 'scenarios', 'forges-passes.json'));

describe('a Coder that forges test results', () => {
  let h: Harness;
  let testsDir: string;

  beforeAll(async () => {
    h = await createHarness({ scenarios: [SCENARIO] });
    await h.startWorker();
    testsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-forgery-tests-'));
    for (const [file, text] of Object.entries(SCENARIO.acceptanceTests ?? {})) {
      fs.mkdirSync(path.dirname(path.join(testsDir, file)), { recursive: true });
      fs.writeFileSync(path.join(testsDir, file), text);
    }
  });

  afterAll(async () => {
    await h?.close();
    fs.rmSync(testsDir, { recursive: true, force: true });
  });

  test('ends FAILED at its limit with the acceptance test unchanged everywhere', async () => {
    const handle = await h.start('forges-passes', { testsDir, maxIterations: 2 });
    const result = await h.result(handle);

    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('max_iterations');
    expect(result.iterations).toBe(2);
    expect(result.passRate).toBe(0);

    const original = SCENARIO.acceptanceTests!['tests/test_add.py'];
    expect(fs.readFileSync(path.join(testsDir, 'tests/test_add.py'), 'utf8')).toBe(original);
    expect(fs.readFileSync(path.join(result.workspace, 'tests/test_add.py'), 'utf8')).toBe(original);
    // The forgery itself is in the workspace, for the user to see.
    expect(result.files).toEqual(expect.arrayContaining(['conftest.py', 'calc.py', 'tests/test_add.py']));

    const reflector = h.llm.requests.find((r) => r.scenario === 'forges-passes' && r.agent === 'reflector');
    const prompt = JSON.stringify(reflector?.messages ?? []);
    expect(prompt).toContain('Test run: tampered');
    expect(prompt).toMatch(/the report file disagrees with the results streamed/);
  });
});
