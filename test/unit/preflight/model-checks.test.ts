import { checkModelEndpoint, DOCTOR_PROBE_TOOL } from '../../../src/preflight/model-checks';
import { ScriptedLlmServer } from '../../../src/llm/scripted-server';

describe("aca doctor's tool-calling probe", () => {
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    llm = await new ScriptedLlmServer({
      scenarios: [
        { name: 'refuses-tool-choice', rejects_tool_choice: true, agents: {} },
        { name: 'takes-tool-choice', agents: {} },
      ],
    }).start();
  });
  afterAll(async () => {
    await llm.stop();
  });

  const probes = (model: string) =>
    llm.requests
      .filter((r) => r.model === model && r.tools.includes(DOCTOR_PROBE_TOOL))
      .map((r) => [r.status, r.params.tool_choice]);

  test('a server that refuses tool_choice is asked once more without it, and passes', async () => {
    const model = 'scripted:refuses-tool-choice';
    const results = await checkModelEndpoint({ baseURL: llm.url, apiKey: undefined, model });
    expect(results.find((r) => r.name === 'tool calling')).toMatchObject({ status: 'ok' });
    expect(probes(model)).toEqual([
      [400, 'auto'],
      [200, undefined],
    ]);
  });

  test('a server that takes tool_choice is asked once, with it', async () => {
    const model = 'scripted:takes-tool-choice';
    const results = await checkModelEndpoint({ baseURL: llm.url, apiKey: undefined, model });
    expect(results.find((r) => r.name === 'tool calling')).toMatchObject({ status: 'ok' });
    expect(probes(model)).toEqual([[200, 'auto']]);
  });
});
