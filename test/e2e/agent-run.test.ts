import { until } from '../helpers/until';
import { createHarness, type Harness } from '../helpers/agent-harness';

describe('codingAgentWorkflow on a real Temporal dev server', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness();
    await h.startWorker();
  });

  afterAll(async () => {
    await h?.close();
  });

  test('the demo scenario fails once, reflects, and succeeds at iteration 2', async () => {
    const handle = await h.start('demo-fizzbuzz');
    const result = await h.result(handle);
    await h.recordHistory(handle, 'demo-fizzbuzz');

    expect(result.state).toBe('SUCCESS');
    expect(result.reason).toBeNull();
    expect(result.iterations).toBe(2);
    expect(result.passRate).toBe(1);
    expect(result.tests).toEqual({ passed: 5, failed: 0, errors: 0 });
    expect(result.transitions.map((t) => `${t.from}->${t.to}`)).toEqual([
      'INIT->PLANNING',
      'PLANNING->CODING',
      'CODING->TESTING',
      'TESTING->REFLECTING',
      'REFLECTING->CODING',
      'CODING->TESTING',
      'TESTING->SUCCESS',
    ]);
    for (const t of result.transitions) expect(Number.isNaN(Date.parse(t.at))).toBe(false);
    expect(result.files).toEqual(expect.arrayContaining(['fizzbuzz.py', 'tests/test_fizzbuzz.py']));
    expect(result.lastAnalysis?.rootCause).toContain('n % 3 before n % 15');
    expect(result.tokens.prompt).toBeGreaterThan(0);

    // The Coder's second attempt saw the Reflector's analysis verbatim (docs/contract.md, section 3).
    const secondCoderCall = h.llm.requests.find((r) => r.agent === 'coder' && r.turn === 1);
    const userText = String(secondCoderCall?.messages.find((m) => m.role === 'user')?.content);
    expect(userText).toContain(result.lastAnalysis!.rootCause);
    expect(userText).toContain(result.lastAnalysis!.fixHypothesis);
    // Every agent's user message carries the task verbatim.
    for (const request of h.llm.requests.filter((r) => r.scenario === 'demo-fizzbuzz')) {
      expect(String(request.messages.find((m) => m.role === 'user')?.content)).toContain(
        'Implement fizzbuzz(n) in fizzbuzz.py',
      );
    }

    // The search attributes followed the run to its end.
    const description = await handle.describe();
    expect(description.searchAttributes.AgentState).toEqual(['SUCCESS']);
    expect(description.searchAttributes.AgentIteration).toEqual([2]);
    expect(description.searchAttributes.AgentPassRate).toEqual([1]);
    expect(description.searchAttributes.AgentLanguage).toEqual(['python']);
  });

  test('a scenario that never passes ends FAILED at the iteration limit with the warning', async () => {
    const handle = await h.start('never-passes', { maxIterations: 3, warnAt: 2 });
    const result = await h.result(handle);
    await h.recordHistory(handle, 'never-passes-3');

    expect(result.state).toBe('FAILED');
    expect(result.reason).toBe('max_iterations');
    expect(result.iterations).toBe(3);
    // add(0, 0) == 0 even when add subtracts: one of the two tests passes.
    expect(result.passRate).toBe(0.5);
    expect(result.warning).toMatch(/iteration 2 of 3/);
    const states = result.transitions.map((t) => t.to);
    expect(states.filter((s) => s === 'CODING')).toHaveLength(3);
    expect(states.at(-1)).toBe('FAILED');
    expect(result.transitions.at(-2)?.to).toBe('REFLECTING');
  });

  test('pause during CODING stops new activities; resume finishes the run', async () => {
    h.llm.setDelay(1500);
    try {
      const handle = await h.start('demo-fizzbuzz');
      await h.waitFor(handle, (s) => s.state === 'CODING');
      await handle.signal('pause');
      const pausedAt = Date.now();
      const paused = await h.waitFor(handle, (s) => s.state === 'PAUSED', 5000);
      expect(Date.now() - pausedAt).toBeLessThan(1000);
      expect(paused.paused).toBe(true);

      // The in-flight model call may finish; after it, nothing new starts while paused. The
      // window below watches for something that must not happen, so it has to be a span of time.
      await until(() => h.llm.requests.every((r) => r.status !== 'pending'), 30_000, 'the call in flight');
      const countWhilePaused = h.llm.requests.length;
      await new Promise((r) => setTimeout(r, 3000));
      expect(h.llm.requests.length).toBe(countWhilePaused);
      expect(((await handle.query('state')) as { state: string }).state).toBe('PAUSED');

      // The slow model kept the pause inside the Coder turn; the rest of the run need not wait.
      h.llm.setDelay(0);
      await handle.signal('resume');
      const result = await h.result(handle);
      await h.recordHistory(handle, 'pause-resume');
      expect(result.state).toBe('SUCCESS');
      const pairs = result.transitions.map((t) => `${t.from}->${t.to}`);
      expect(pairs).toContain('CODING->PAUSED');
      const resumedTo = result.transitions.find((t) => t.from === 'PAUSED')?.to;
      expect(['CODING', 'TESTING']).toContain(resumedTo);
    } finally {
      h.llm.setDelay(0);
    }
  });
});
