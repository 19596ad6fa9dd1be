/**
 * `aca eval` end to end on generated repositories (a work tree, a bare repository, a bundle;
 * Python and TypeScript): the built command, a real worker and Temporal server, the sandbox, and
 * the scripted model for the agent's batches.
 */
import { randomBytes } from 'node:crypto';
import { readRunResult } from '../../src/shared/run-failure';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EvalReport } from '../../src/shared/eval-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { goldScenario, makeEvalFixture, type EvalFixture } from '../helpers/eval-fixtures';
import type { RunResult } from '../../src/shared/run-types';
import { gitIn, repoDigest } from '../helpers/repo-fixtures';
import { runCli } from '../helpers/run-cli';

/** Batch ids of this test run: a batch kept in a shared database keeps its id for good. */
const RUN = randomBytes(3).toString('hex');

const REPORT_KEYS = [
  'total_instances',
  'submitted_instances',
  'completed_instances',
  'resolved_instances',
  'unresolved_instances',
  'empty_patch_instances',
  'error_instances',
  'submitted_ids',
  'completed_ids',
  'resolved_ids',
  'unresolved_ids',
  'empty_patch_ids',
  'error_ids',
  'cost_usd',
  'tokens',
  'instances',
];

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

/** An instance's row of report.json (wherever the batch kept its results: a folder or the database). */
function resultOf(out: string, id: string): { resolved: boolean; reason: string | null } {
  const report = readJson<{
    instances: Array<{ instance_id: string; resolved: boolean; reason: string | null }>;
  }>(path.join(out, 'report.json'));
  const row = report.instances.find((r) => r.instance_id === id);
  if (!row) throw new Error(`report.json has no row for ${id}`);
  return row;
}

describe('aca eval on generated repositories', () => {
  let h: Harness;
  let fixture: EvalFixture;
  let pricesFile: string;
  const env = () => ({ ...h.cliEnv(), ACA_PRICES: pricesFile });

  beforeAll(async () => {
    fixture = makeEvalFixture();
    pricesFile = path.join(fixture.root, 'prices.json');
    // A dollar a token: the first model call of a run spends any small budget.
    fs.writeFileSync(pricesFile, JSON.stringify({ scripted: { input: 1_000_000, output: 1_000_000 } }));
    const scenarios = fixture.instances.map((i) =>
      goldScenario(
        i.instance_id,
        /Marker [\w-]+-task/.exec(i.problem_statement)![0],
        fixture.goldFiles.get(i.instance_id)!,
      ),
    );
    h = await createHarness({ scenarios, env: { ACA_PRICES: path.join(fixture.root, 'prices.json') } });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
    if (fixture) fs.rmSync(fixture.root, { recursive: true, force: true });
  });

  test('--predictions gold: each kind of repository resolves; a test command past its time limit is reported, not fatal', async () => {
    const before = repoDigest(fixture.workTree);
    const out = path.join(fixture.root, 'out-gold');
    const run = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--predictions',
        'gold',
        '--id',
        `fx-gold-${RUN}`,
        '--out',
        out,
        '--concurrency',
        '2',
        '--json',
      ],
      env(),
    );
    expect(run.stderr).toContain(`fx-gold-${RUN}: done`);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as EvalReport;
    expect(Object.keys(report)).toEqual(REPORT_KEYS);
    expect(report.resolved_ids.sort()).toEqual(['acme__calc-add', 'acme__calc-neg', 'acme__tsutil-sum']);
    expect(report.unresolved_ids).toEqual(['acme__slow-answer']);
    expect(resultOf(out, 'acme__slow-answer').reason).toMatch(/timed out/);
    // Given patches: no run, so no state or attempts; the tests that did not pass are named.
    expect(report.instances!.map((row) => row.instance_id).sort()).toEqual([
      'acme__calc-add',
      'acme__calc-neg',
      'acme__slow-answer',
      'acme__tsutil-sum',
    ]);
    const slow = report.instances!.find((row) => row.instance_id === 'acme__slow-answer')!;
    expect(slow).toMatchObject({ state: null, iterations: 0, resolved: false });
    expect(slow.reason).toMatch(/timed out/);
    expect(slow.failed_tests.length).toBeGreaterThan(0);
    expect(report).toMatchObject({
      total_instances: 4,
      submitted_instances: 4,
      completed_instances: 4,
      error_instances: 0,
    });
    expect(readJson(path.join(out, 'report.json'))).toEqual(report);
    const predictions = fs
      .readFileSync(path.join(out, 'predictions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(predictions.map((p) => Object.keys(p))).toEqual(
      Array(4).fill(['instance_id', 'model_name_or_path', 'model_patch']),
    );
    expect(predictions.find((p) => p.instance_id === 'acme__calc-add')!.model_patch).toBe(
      fixture.instances[0]!.patch,
    );

    const shown = await runCli(['eval', 'report', `fx-gold-${RUN}`, '--json'], env());
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual(report);
    const status = await runCli(['eval', 'status', `fx-gold-${RUN}`, '--json'], env());
    expect(JSON.parse(status.stdout)).toMatchObject({ done: 4, resolved: 3, ended: true });
    // The user's work tree, index, HEAD and refs as they were.
    expect(repoDigest(fixture.workTree)).toEqual(before);
  });

  test('--predictions empty resolves none; a predictions file: a patch that does not apply is unresolved with its reason, a missing one not submitted', async () => {
    const empty = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--predictions',
        'empty',
        '--id',
        `fx-empty-${RUN}`,
        '--out',
        path.join(fixture.root, 'out-empty'),
        '--json',
      ],
      env(),
    );
    expect(empty.code).toBe(0);
    const emptyReport = JSON.parse(empty.stdout) as EvalReport;
    expect(emptyReport).toMatchObject({
      resolved_instances: 0,
      empty_patch_instances: 4,
      completed_instances: 0,
    });

    const file = path.join(fixture.root, 'predictions.jsonl');
    const broken = fixture.instances[0]!.patch.replace('-    return a - b', '-    return a ** b');
    fs.writeFileSync(
      file,
      `${JSON.stringify({ instance_id: 'acme__calc-add', model_name_or_path: 'elsewhere', model_patch: broken })}\n`,
    );
    const out = path.join(fixture.root, 'out-file');
    const given = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--predictions',
        file,
        '--id',
        `fx-file-${RUN}`,
        '--out',
        out,
        '--json',
      ],
      env(),
    );
    expect(given.code).toBe(0);
    const report = JSON.parse(given.stdout) as EvalReport;
    expect(report).toMatchObject({
      total_instances: 4,
      submitted_instances: 1,
      unresolved_ids: ['acme__calc-add'],
    });
    expect(resultOf(out, 'acme__calc-add').reason).toMatch(/does not apply/);
    expect(fs.readFileSync(path.join(out, 'predictions.jsonl'), 'utf8')).toContain(
      '"model_name_or_path":"elsewhere"',
    );
  });

  test('the agent: each child run applies the gold patch and resolves; no model request holds a patch, a test patch or a test id', async () => {
    const out = path.join(fixture.root, 'out-agent');
    const only = 'acme__calc-add,acme__tsutil-sum';
    const run = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--only',
        only,
        '--model',
        'scripted',
        '--max-iterations',
        '1',
        '--id',
        `fx-agent-${RUN}`,
        '--out',
        out,
        '--concurrency',
        '2',
        '--json',
      ],
      env(),
      600_000,
    );
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as EvalReport;
    expect(report.resolved_ids.sort()).toEqual(['acme__calc-add', 'acme__tsutil-sum']);
    expect(report.tokens.prompt).toBeGreaterThan(0);
    const children = await h.client.workflow
      .getHandle(`fx-agent-${RUN}/acme__calc-add`)
      .describe()
      .catch(() => null);
    expect(children?.parentExecution?.workflowId).toBe(`fx-agent-${RUN}`);
    // Each run's work tree is gone once its patch is evaluated; its branch stays in aca's copy.
    const child = (await readRunResult(
      h.client.workflow.getHandle(`fx-agent-${RUN}/acme__calc-add`),
    )) as RunResult;
    expect(fs.existsSync(child.place!.workTree)).toBe(false);
    expect(gitIn(child.place!.commonDir, 'rev-parse', `aca/fx-agent-${RUN}/acme__calc-add`).trim()).toBe(
      child.headCommit,
    );

    const sent = h.llm.requests.filter(
      (r) => r.scenario === 'acme__calc-add' || r.scenario === 'acme__tsutil-sum',
    );
    expect(sent.length).toBeGreaterThan(4);
    const text = JSON.stringify(sent.map((r) => r.messages));
    for (const instance of fixture.instances.filter((i) => only.includes(i.instance_id))) {
      const secrets = [
        instance.patch,
        instance.test_patch,
        instance.FAIL_TO_PASS,
        instance.PASS_TO_PASS,
        ...(JSON.parse(instance.FAIL_TO_PASS) as string[]),
        ...(JSON.parse(instance.PASS_TO_PASS) as string[]),
        // The new test's body, which only the test patch holds.
        ...instance.test_patch
          .split('\n')
          .filter((l) => /^\+.*(c5d1|7f3a)/.test(l))
          .map((l) => l.slice(1)),
      ];
      for (const secret of secrets) expect(text.includes(JSON.stringify(secret).slice(1, -1))).toBe(false);
    }
  });

  test('--max-cost: once the runs ended cost the budget, no new instance starts and those left are not submitted', async () => {
    const run = await runCli(
      [
        'eval',
        fixture.instancesFile,
        '--repos',
        fixture.reposDir,
        '--only',
        'acme__calc-add,acme__calc-neg,acme__tsutil-sum',
        '--model',
        'scripted',
        '--max-iterations',
        '1',
        '--max-cost',
        '0.5',
        '--concurrency',
        '1',
        '--id',
        `fx-budget-${RUN}`,
        '--out',
        path.join(fixture.root, 'out-budget'),
        '--json',
      ],
      env(),
      600_000,
    );
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as EvalReport;
    expect(report.total_instances).toBe(3);
    expect(report.submitted_ids).toEqual(['acme__calc-add']);
    expect(report.cost_usd).toBeGreaterThan(0.5);
  });

  test('bad input exits 2 (a line that is not an instance, a repository not found, an unknown batch), Temporal unreachable 3', async () => {
    const bad = path.join(fixture.root, 'bad.jsonl');
    fs.writeFileSync(bad, '{"instance_id": "x"}\n');
    const notInstance = await runCli(['eval', bad, '--repos', fixture.reposDir], env());
    expect(notInstance.code).toBe(2);
    expect(notInstance.stderr).toMatch(/line 1 is not an instance/);
    const noRepos = await runCli(['eval', fixture.instancesFile, '--repos', fixture.root], env());
    expect(noRepos.code).toBe(2);
    expect(noRepos.stderr).toMatch(/repository acme\/calc is not in/);
    const unknown = await runCli(['eval', 'status', 'no-such-batch'], env());
    expect(unknown.code).toBe(2);
    // Temporal unreachable: exit 3, and nothing of the batch left, so the same command can be given again.
    const out = path.join(fixture.root, 'out-unreachable');
    const unreachable = await runCli(
      ['eval', fixture.instancesFile, '--repos', fixture.reposDir, '--predictions', 'gold', '--out', out],
      { ...env(), TEMPORAL_ADDRESS: '127.0.0.1:1' },
    );
    expect(unreachable.code).toBe(3);
    expect(fs.existsSync(out)).toBe(false);
  });
});
