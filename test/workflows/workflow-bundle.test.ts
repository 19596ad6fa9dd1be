import { workflowBundle } from '../helpers/agent-harness';

/** The workflow bundle runs in every workflow isolate: it must stay small and free of I/O libraries. */
describe('the workflow bundle', () => {
  test('holds workflow and shared code only, no zod, openai or pg', async () => {
    const { code } = await workflowBundle();
    const modules = (code.match(/!\*\*\* \.\/[^*]+ \*\*\*!/g) ?? []).map((m) => m.slice(5, -5));
    const ours = modules.filter((m) => m.startsWith('./src/'));
    expect(ours.length).toBeGreaterThan(0);
    for (const m of ours) expect(m).toMatch(/^\.\/src\/(workflows|shared)\//);
    for (const banned of ['zod', 'openai', 'pg', 'pg-pool', '@electric-sql/pglite']) {
      expect(modules.filter((m) => m.startsWith(`./node_modules/${banned}/`))).toEqual([]);
    }
    expect(code.length).toBeLessThan(3 * 1024 * 1024);
  });
});
