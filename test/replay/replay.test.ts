import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { HISTORIES_DIR, workflowBundle } from '../helpers/agent-harness';

const SOURCE_DIR = path.resolve(__dirname, '../../src');
const noop = (): void => undefined;
const quietLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };

function loadHistory(name: string): unknown {
  return JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, `${name}.json`), 'utf8'));
}

/**
 * The workflow as it would be after one small edit: the source tree is copied, `search` replaced
 * by `replacement` in one file, and the copy bundled. The edit must match exactly once.
 */
async function alteredBundle(file: string, search: string, replacement: string) {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-altered-'));
  try {
    fs.cpSync(SOURCE_DIR, path.join(copy, 'src'), { recursive: true });
    fs.symlinkSync(path.resolve(SOURCE_DIR, '..', 'node_modules'), path.join(copy, 'node_modules'));
    const target = path.join(copy, 'src', file);
    const source = fs.readFileSync(target, 'utf8');
    expect(source.split(search).length).toBe(2);
    fs.writeFileSync(target, source.replace(search, replacement));
    return await bundleWorkflowCode({
      workflowsPath: path.join(copy, 'src', 'workflows', 'index.ts'),
      logger: quietLogger,
    });
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

/** The histories among `names` that fail to replay against `bundle`; with `firstOnly`, the first such. */
async function replayFailures(
  bundle: { code: string },
  names: string[],
  { firstOnly = false }: { firstOnly?: boolean } = {},
): Promise<string[]> {
  const failures: string[] = [];
  const histories = names.map((name) => ({ workflowId: name, history: loadHistory(name) }));
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    // Leaving the loop shuts the replay worker down; the histories after it are not replayed.
    if (firstOnly && failures.length > 0) break;
  }
  return failures;
}

/**
 * Every saved history must replay against the current workflow code. aca has not been released:
 * a change that alters the commands of a saved run is made by recording the histories again
 * (ACA_RECORD_HISTORIES=1). After the first release it needs patched(); see README.
 */
describe('replay of saved histories', () => {
  const names = fs
    .readdirSync(HISTORIES_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => path.basename(f, '.json'))
    .sort();

  test('the saved runs cover every way a run goes and ends', () => {
    expect(names).toEqual(
      expect.arrayContaining([
        'demo-fizzbuzz',
        'never-passes-3',
        'pause-resume',
        'budget',
        'bad-tool-calls',
        'cancelled',
        'feedback',
        'error-401',
        'turn-error',
        'memory-outage',
        'crash-model-call',
        'continue-as-new',
        'repo-python-fix',
        'repo-setup-failed',
        'ask-limit-extended',
        'fork-at-2',
        'repo-target-failed',
        'repo-plan-target',
        'repo-unknown-target',
        'run-command-fix',
        'mcp-tool',
      ]),
    );
  });

  test('all saved histories replay without nondeterminism', async () => {
    expect(await replayFailures(await workflowBundle(), names)).toEqual([]);
  });

  // The negative control: one more command in the middle of one path must fail the replay of the
  // run that took that path, and only of runs that took it.
  test('one extra activity on the cancel path fails replay of the cancelled run only', async () => {
    const bundle = await alteredBundle(
      'workflows/coding-agent.ts',
      "run.record.error = 'the run was cancelled';",
      `run.record.error = 'the run was cancelled';
      await run.activities.reports.checkTargets({ reportRef: 'extra', targets: [] });`,
    );
    const failures = await replayFailures(bundle, ['cancelled', 'demo-fizzbuzz']);
    expect(failures).toEqual([expect.stringMatching(/^cancelled: .*[Nn]ondetermin/)]);
  }, 120_000);

  // The audit's experiment: small changes a reviewer could miss, each of which alters the commands
  // of at least one saved run. Each must fail the replay of some history.
  const listFiles = "await run.activities.reports.checkTargets({ reportRef: 'extra', targets: [] });";
  const mutations: Array<[string, string, string, string]> = [
    [
      'an extra activity on the error path',
      'workflows/coding-agent.ts',
      "log.error('run failed', { error: run.record.error });",
      `log.error('run failed', { error: run.record.error });\n      ${listFiles}`,
    ],
    [
      'an extra activity on the feedback path',
      'workflows/phase-handlers.ts',
      'const feedback = work.pendingFeedback.splice(0, work.pendingFeedback.length);',
      `const feedback = work.pendingFeedback.splice(0, work.pendingFeedback.length);\n  if (feedback.length) ${listFiles}`,
    ],
    [
      'a changed continue-as-new condition',
      'workflows/continue-as-new.ts',
      'run.attemptsThisExecution === 0 ||',
      'run.attemptsThisExecution < 2 ||',
    ],
    [
      'the task stored before planning',
      'workflows/phase-handlers.ts',
      '  let planned: TurnResult;\n',
      `  let planned: TurnResult;\n  run.memory.add('early', () => run.activities.memoryWrites.rememberRun({ workflowId: run.workflowId, task: run.input.task, language: run.input.language }));\n`,
    ],
    [
      'an extra activity per iteration',
      'workflows/phase-handlers.ts',
      'countIterationStarted(input.language);',
      `countIterationStarted(input.language);\n  ${listFiles}`,
    ],
    [
      'the steps of the ending reordered',
      'workflows/run-ending.ts',
      "run.publish('Saving failure memory before the run ends…');",
      "run.publish('Saving failure memory before the run ends…');\n    await run.memory.drained();",
    ],
    ['the idle-step limit changed', 'workflows/agent-turn.ts', 'MAX_IDLE_STEPS = 3;', 'MAX_IDLE_STEPS = 4;'],
    [
      'a failing target excused like any other test',
      'shared/targets.ts',
      "return run.success && (run.targets ?? []).every((t) => t.outcome === 'passed');",
      'return run.success;',
    ],
    [
      "the Planner's targets not checked against the baseline",
      'workflows/phase-handlers.ts',
      'if (work.baselineRef && wellFormed.length > 0) {',
      'if (false) {',
    ],
    [
      "an eval batch's concurrency bound changed",
      'workflows/eval-batch.ts',
      'running.size < input.concurrency',
      'running.size <= input.concurrency',
    ],
  ];

  test.each(mutations)(
    '%s fails replay of a saved run',
    async (_name, file, search, replacement) => {
      const bundle = await alteredBundle(file, search, replacement);
      // One failing history is the proof; replaying the rest would only take time.
      const failures = await replayFailures(bundle, names, { firstOnly: true });
      expect(failures.length).toBeGreaterThan(0);
    },
    120_000,
  );
});
