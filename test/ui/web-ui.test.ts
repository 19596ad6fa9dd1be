/**
 * The operator's view of finished runs, in a real browser: Debian's chromium driven by
 * playwright-core against the Web UI of the test's Temporal dev server (Temporal CLI v1.5.1,
 * UI 2.42). The run is the demo scenario, run to SUCCESS through the test harness, whose worker
 * stays up so the UI can ask it for the run's current details.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';
import { firstLine } from '../../src/api/run-request';
import { loadBuiltinScenario } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { describeWithBrowser } from '../helpers/chromium';
import { runCli } from '../helpers/run-cli';

const ARTIFACTS = path.resolve(__dirname, 'artifacts');
const DEMO = loadBuiltinScenario('demo-fizzbuzz');

/** The UI renders markdown with typographic quotes and fraction slashes; compare on plain text. */
function plain(text: string): string {
  return text
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\u2044/g, '/')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The page's main text followed by the text of its frames: the UI renders user markdown (the
 * summary, details and current details) inside sandboxed iframes.
 */
async function visibleText(page: Page): Promise<string> {
  const parts = [
    await page
      .locator('main')
      .innerText()
      .catch(() => ''),
  ];
  for (const frame of page.frames()) {
    if (frame === page.mainFrame()) continue;
    parts.push(
      await frame
        .locator('body')
        .innerText({ timeout: 1000 })
        .catch(() => ''),
    );
  }
  return plain(parts.join('\n'));
}

/** Polls the page until every expected piece of text is there; fails naming what is not. */
async function waitForTexts(page: Page, expected: string[], timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let text = '';
  for (;;) {
    text = await visibleText(page);
    const missing = expected.filter((e) => !text.includes(plain(e)));
    if (!missing.length) return text;
    if (Date.now() > deadline) {
      throw new Error(
        `the page ${page.url()} never showed ${JSON.stringify(missing)}; it shows:\n${text.slice(0, 3000)}`,
      );
    }
    await page.waitForTimeout(500);
  }
}

describeWithBrowser('the Temporal Web UI shows a finished demo run', ({ chromium, uiUrl }) => {
  let harness: Harness;
  let browser: Browser;
  let handle: WorkflowHandle;
  let runId: string;
  let result: RunResult;

  beforeAll(async () => {
    // One host as `aca demo` has it: conversations and failure memory under its ACA_HOME, not in
    // the database CI names.
    harness = await createHarness({ env: { DATABASE_URL: undefined } });
    expect(harness.config.databaseUrl).toBeNull();
    await harness.startWorker();
    handle = await harness.start('demo-fizzbuzz');
    result = await harness.result(handle);
    runId = (await handle.describe()).runId;
    browser = await playwright.launch({ executablePath: chromium, args: ['--no-sandbox'] });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  const runPageOf = (workflowId: string, id: string, tab: string): string =>
    `${uiUrl}/namespaces/${encodeURIComponent(harness.config.namespace)}/workflows/${encodeURIComponent(workflowId)}/${id}/${tab}`;
  const runPage = (tab: string): string => runPageOf(handle.workflowId, runId, tab);

  test('the demo run ends in SUCCESS and `aca list --state SUCCESS` lists it', async () => {
    expect(result).toMatchObject({ state: 'SUCCESS', reason: null, iterations: 2, passRate: 1 });
    const env = {
      TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
      TEMPORAL_NAMESPACE: harness.config.namespace,
      ACA_HOME: harness.home,
    };
    const listed = await runCli(['list', '--state', 'SUCCESS', '--json'], env, 60_000);
    expect(listed.code).toBe(0);
    const rows = JSON.parse(listed.stdout) as Array<{
      workflowId: string;
      state: string;
      iteration: number;
      passRate: number;
    }>;
    expect(rows.find((r) => r.workflowId === handle.workflowId)).toMatchObject({
      state: 'SUCCESS',
      iteration: 2,
      passRate: 1,
    });
    // Other states do not list it.
    const failed = await runCli(['list', '--state', 'FAILED', '--json'], env, 60_000);
    expect(
      (JSON.parse(failed.stdout) as Array<{ workflowId: string }>).map((r) => r.workflowId),
    ).not.toContain(handle.workflowId);
    // The table form names it with its state.
    const table = await runCli(['list', '--state', 'SUCCESS'], env, 60_000);
    expect(table.stdout).toMatch(new RegExp(`SUCCESS\\s+2\\s+100%\\s+python\\s+${handle.workflowId}`));
  });

  test('its User Metadata tab shows the static summary, the current details and the activity summaries', async () => {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1100 } });
    try {
      await page.goto(runPage('user-metadata'), { waitUntil: 'networkidle' });
      const text = await waitForTexts(page, [
        'Summary',
        firstLine(DEMO.task ?? ''),
        'Current Details',
        'State: SUCCESS',
        'Iteration: 2/15',
        'Pass rate: 100% (5 passed, 0 failed, 0 errors)',
        'coder · create_file fizzbuzz.py',
        'tester · create_file tests/test_fizzbuzz.py',
        'tester · run tests (attempt 2)',
        'reflector · model step 1',
      ]);
      // The latest analysis is part of the current details.
      expect(text).toContain('Latest analysis');
      expect(text).toContain(plain(result.lastAnalysis?.rootCause ?? 'no analysis'));
      // Every summary is listed: model steps, test runs and the host's steps (file tool calls,
      // turn openings, turn commits) as activities with their outcome.
      expect(text).toMatch(/Activity coder · model step 1 Completed/);
      expect(text).toMatch(/Activity tester · run tests \(attempt 2\) Completed/);
      expect(text).toMatch(/Activity coder · create_file fizzbuzz\.py Completed/);
      expect(text).toMatch(/Activity planner · list_files \. Completed/);
      expect(text).toMatch(/Activity tester · open the turn Completed/);
      expect(text).toMatch(/Activity git · commit coder turn of attempt 1 Completed/);
      expect(text).toMatch(
        /Activity git · changed files; give the workspace back from the sandbox user Completed/,
      );
      // No step is a local activity.
      expect(text).not.toContain('Local Activity');
      await page.screenshot({ path: path.join(ARTIFACTS, 'demo-run.png'), fullPage: false });
    } finally {
      await page.close();
    }
  });

  test('the workflow list tells a FAILED run from a SUCCESS at a glance, and the FAILED run says why', async () => {
    // One attempt is too few for the demo: the run ends FAILED max_iterations.
    const failing = await harness.start('demo-fizzbuzz', { maxIterations: 1, warnAt: 1 });
    const failed = await harness.result(failing);
    expect(failed).toMatchObject({ state: 'FAILED', reason: 'max_iterations', iterations: 1 });
    const page = await browser.newPage({ viewport: { width: 1600, height: 1100 } });
    try {
      const ids = [handle.workflowId, failing.workflowId];
      const query = ids.map((id) => `WorkflowId = '${id}'`).join(' OR ');
      await page.goto(
        `${uiUrl}/namespaces/${encodeURIComponent(harness.config.namespace)}/workflows?query=${encodeURIComponent(query)}`,
        { waitUntil: 'networkidle' },
      );
      // Each run's row in the list: after the row's checkbox, its status and then its id.
      const row = async (id: string): Promise<string> =>
        plain(
          await page
            .locator('tr', { hasText: id })
            .first()
            .innerText({ timeout: 1000 })
            .catch(() => ''),
        );
      const deadline = Date.now() + 30_000;
      let rows = ['', ''];
      while (Date.now() < deadline) {
        rows = await Promise.all(ids.map(row));
        if (rows.every(Boolean)) break;
        await page.waitForTimeout(500);
      }
      const [succeeded, failedRow] = rows;
      expect(succeeded).toMatch(new RegExp(`^(?:Select Workflow \\S+ )?Completed ${handle.workflowId} `));
      expect(succeeded).not.toContain('Failed');
      expect(failedRow).toMatch(new RegExp(`^(?:Select Workflow \\S+ )?Failed ${failing.workflowId} `));
      expect(failedRow).not.toContain('Completed');
      await page.screenshot({ path: path.join(ARTIFACTS, 'run-list.png'), fullPage: false });
      // The run's own page gives the reason in one line.
      await page.goto(runPageOf(failing.workflowId, (await failing.describe()).runId, 'history'), {
        waitUntil: 'networkidle',
      });
      await waitForTexts(page, ['Failed', 'FAILED max_iterations after 1 of at most 1 iteration, pass rate']);
      await page.screenshot({ path: path.join(ARTIFACTS, 'failed-run.png'), fullPage: false });
    } finally {
      await page.close();
    }
  }, 180_000);

  test('a run waiting at its iteration limit says so, and how to extend it, in its current details', async () => {
    const waiting = await harness.start('demo-fizzbuzz', { maxIterations: 1, warnAt: 1, onLimit: 'ask' });
    const page = await browser.newPage({ viewport: { width: 1600, height: 1100 } });
    try {
      await harness.waitFor(waiting, (s) => s.waiting === 'limit', 90_000);
      const waitingRunId = (await waiting.describe()).runId;
      await page.goto(
        `${uiUrl}/namespaces/${encodeURIComponent(harness.config.namespace)}/workflows/${encodeURIComponent(waiting.workflowId)}/${waitingRunId}/user-metadata`,
        // A running workflow's page keeps polling: the network never goes idle.
        { waitUntil: 'load' },
      );
      await waitForTexts(page, [
        'Current Details',
        'State: REFLECTING',
        'Iteration: 1/1',
        `Waiting: at its iteration limit; aca extend ${waiting.workflowId} --iterations N gives it N more attempts`,
      ]);
      await page.screenshot({ path: path.join(ARTIFACTS, 'waiting-run.png'), fullPage: false });
    } finally {
      await page.close();
      await waiting.cancel();
    }
  });

  test("a fork's details link to the run it came from, and the link opens that run", async () => {
    const forkId = `${handle.workflowId}-fork`;
    const forked = await runCli(
      ['fork', handle.workflowId, '--at', '2', '--id', forkId, '--json'],
      harness.cliEnv(),
      120_000,
    );
    expect(forked.code).toBe(0);
    expect(JSON.parse(forked.stdout)).toMatchObject({ parentRun: handle.workflowId, state: 'SUCCESS' });
    const forkRunId = (await harness.client.workflow.getHandle(forkId).describe()).runId;
    const page = await browser.newPage({ viewport: { width: 1600, height: 1100 } });
    try {
      await page.goto(
        `${uiUrl}/namespaces/${encodeURIComponent(harness.config.namespace)}/workflows/${encodeURIComponent(forkId)}/${forkRunId}/user-metadata`,
        { waitUntil: 'networkidle' },
      );
      await waitForTexts(page, [`Forked from: ${handle.workflowId} at attempt 2`]);
      let href: string | null = null;
      for (const frame of page.frames()) {
        // The UI replaces frames as it renders: one detached meanwhile holds no link.
        const link = frame.locator('a', { hasText: handle.workflowId });
        if ((await link.count().catch(() => 0)) > 0)
          href =
            (await link
              .first()
              .getAttribute('href')
              .catch(() => null)) ?? href;
      }
      expect(href).not.toBeNull();
      const target = new URL(href!, uiUrl);
      expect(target.origin).toBe(new URL(uiUrl).origin);
      expect(decodeURIComponent(target.pathname)).toBe(
        `/namespaces/${harness.config.namespace}/workflows/${handle.workflowId}`,
      );
      await page.screenshot({ path: path.join(ARTIFACTS, 'fork-details.png'), fullPage: false });
      // Followed, the link opens the parent run's page: its id, its end and its own input.
      await page.goto(target.toString(), { waitUntil: 'networkidle' });
      const parentPage = await waitForTexts(page, [handle.workflowId, 'Completed', 'codingAgentWorkflow']);
      expect(parentPage).toContain(`"workspace": "${result.workspace}"`);
      expect(parentPage).not.toContain(`"workflowId": "${forkId}"`);
    } finally {
      await page.close();
    }
  }, 180_000);

  test('its History tab shows the run as Completed with its activities, host steps included, on the timeline', async () => {
    const page = await browser.newPage({ viewport: { width: 1600, height: 1100 } });
    try {
      await page.goto(runPage('history'), { waitUntil: 'networkidle' });
      const text = await waitForTexts(page, [
        handle.workflowId,
        'Completed',
        'codingAgentWorkflow',
        'agentStep • coder · model step 1',
        'runTests • tester · run tests (attempt 1)',
        'rememberOutcome • memory · store attempt 2 and outcome',
      ]);
      // The steps of the run's host appear like any activity, by type and summary.
      expect(text).toContain('closeRun • git · changed files; give the workspace back from the sandbox user');
      expect(text).toContain('openTurn • tester · open the turn');
      expect(text).toContain('create_file • coder · create_file fizzbuzz.py');
      expect(text).toContain('commitTurn • git · commit coder turn of attempt 1');
      expect(text).toContain(`Task Queue ${harness.taskQueue}`);
      await page.screenshot({ path: path.join(ARTIFACTS, 'demo-run-history.png'), fullPage: false });
    } finally {
      await page.close();
    }
  });
});
