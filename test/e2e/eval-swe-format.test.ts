/**
 * `aca eval` on the shared SWE-bench-format set (two real Python projects as git bundles): the
 * harness checked against itself (gold resolves every instance, empty none) and a batch of the
 * agent, whose scripted Coder writes each instance's gold patch, resolving every instance without
 * any model request holding a patch, a test patch or the lists of tests.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { patchFiles, readInstances, type EvalInstance } from '../../src/eval/instances';
import type { EvalReport } from '../../src/shared/eval-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { goldScenario } from '../helpers/eval-fixtures';
import { runCli } from '../helpers/run-cli';

/** Batch ids of this test run: a batch kept in a shared database keeps its id for good. */
const RUN = randomBytes(3).toString('hex');

const DATASET =
  process.env.ACA_SWE_FORMAT_DIR ??
  path.resolve(__dirname, '..', '..', '..', 'shared', 'datasets', 'swe-format');
const INSTANCES = path.join(DATASET, 'instances.jsonl');
const REPOS = path.join(DATASET, 'repos');

/** Each instance's changed files as its gold patch leaves them, read from a scratch clone. */
function goldFiles(instances: EvalInstance[], scratch: string): Map<string, Record<string, string>> {
  const files = new Map<string, Record<string, string>>();
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });
  for (const instance of instances) {
    const clone = path.join(scratch, instance.repo.replace('/', '__'));
    if (!fs.existsSync(clone))
      git(scratch, 'clone', '--quiet', path.join(REPOS, `${instance.repo.replace('/', '__')}.bundle`), clone);
    git(clone, 'checkout', '--quiet', '--force', instance.base_commit);
    git(clone, 'clean', '-fdq');
    fs.writeFileSync(path.join(scratch, 'gold.patch'), instance.patch);
    git(clone, 'apply', path.join(scratch, 'gold.patch'));
    files.set(
      instance.instance_id,
      Object.fromEntries(
        patchFiles(instance.patch).map((f) => [f, fs.readFileSync(path.join(clone, f), 'utf8')]),
      ),
    );
  }
  return files;
}

/** The problem statement's last line (the user's report of the wrong behaviour), which names the instance. */
function matchOf(instance: EvalInstance): string {
  return instance.problem_statement.trim().split('\n').pop()!.trim();
}

/**
 * One instance of each repository layout and test command: toolz's package tests (functoolz and
 * itertoolz) and its sandbox folder, itsdangerous's src layout (PYTHONPATH=src) and its older
 * single module. The gold case runs all twelve; the cases that run an instance's whole suite for
 * another reason run these.
 */
const EACH_LAYOUT = ['3705d6ad7b', '5a7e078c94', 'e90e362ed8', '526b1ea029', 'ce5e2cd0af'];
const ofEachLayout = (instances: EvalInstance[]): EvalInstance[] =>
  instances.filter((i) => EACH_LAYOUT.some((id) => i.instance_id.endsWith(id)));

const describeWithData = fs.existsSync(INSTANCES) ? describe : describe.skip;
if (!fs.existsSync(INSTANCES))
  console.warn(`the SWE-bench-format set is not at ${DATASET} (ACA_SWE_FORMAT_DIR): skipped`);

describeWithData('aca eval on the shared SWE-bench-format set', () => {
  let h: Harness;
  let scratch: string;
  let instances: EvalInstance[];

  beforeAll(async () => {
    instances = readInstances(INSTANCES);
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-swe-format-'));
    const gold = goldFiles(instances, scratch);
    const matches = instances.map(matchOf);
    // Each scenario answers one instance's runs only.
    for (const [i, match] of matches.entries()) {
      expect(
        instances.filter((other) => other.problem_statement.includes(match)).map((o) => o.instance_id),
      ).toEqual([instances[i]!.instance_id]);
    }
    h = await createHarness({
      scenarios: instances.map((instance, i) =>
        goldScenario(instance.instance_id, matches[i]!, gold.get(instance.instance_id)!),
      ),
    });
    await h.startWorker();
  });
  afterAll(async () => {
    await h?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  test('--predictions gold resolves every instance and empty none', async () => {
    const all = instances.map((i) => i.instance_id).sort();
    const gold = await runCli(
      [
        'eval',
        INSTANCES,
        '--repos',
        REPOS,
        '--predictions',
        'gold',
        '--id',
        `swe-gold-${RUN}`,
        '--concurrency',
        '2',
        '--json',
      ],
      h.cliEnv(),
    );
    expect(gold.code).toBe(0);
    const goldReport = JSON.parse(gold.stdout) as EvalReport;
    expect(goldReport.resolved_ids.sort()).toEqual(all);
    expect(goldReport.total_instances).toBe(12);

    const empty = await runCli(
      ['eval', INSTANCES, '--repos', REPOS, '--predictions', 'empty', '--id', `swe-empty-${RUN}`, '--json'],
      h.cliEnv(),
    );
    expect(empty.code).toBe(0);
    const emptyReport = JSON.parse(empty.stdout) as EvalReport;
    expect(emptyReport.resolved_instances).toBe(0);
    expect(emptyReport.empty_patch_ids.sort()).toEqual(all);
  });

  test('a patch that only adds a conftest.py clearing what each test raised resolves nothing: the verdict never loads it', async () => {
    const conftest = [
      'import pytest',
      '',
      '',
      '@pytest.hookimpl(hookwrapper=True)',
      'def pytest_runtest_makereport(item, call):',
      '    call.excinfo = None',
      "    item.__dict__.pop('_excinfo', None)",
      '    yield',
    ];
    const patch = [
      'diff --git a/conftest.py b/conftest.py',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/conftest.py',
      `@@ -0,0 +1,${conftest.length} @@`,
      ...conftest.map((line) => `+${line}`),
      '',
    ].join('\n');
    // Where a conftest.py is loaded from depends on the layout and the test command, not on the
    // instance: one of each (the gold case above shows every instance's tests run).
    const chosen = ofEachLayout(instances);
    expect(chosen).toHaveLength(EACH_LAYOUT.length);
    const predictions = path.join(scratch, 'forged.jsonl');
    fs.writeFileSync(
      predictions,
      chosen
        .map((i) =>
          JSON.stringify({ instance_id: i.instance_id, model_patch: patch, model_name_or_path: 'forger' }),
        )
        .join('\n'),
    );
    const forged = await runCli(
      [
        'eval',
        INSTANCES,
        '--repos',
        REPOS,
        '--predictions',
        predictions,
        '--only',
        chosen.map((i) => i.instance_id).join(','),
        '--id',
        `swe-forged-${RUN}`,
        '--concurrency',
        '2',
        '--json',
      ],
      h.cliEnv(),
    );
    expect(forged.code).toBe(0);
    const report = JSON.parse(forged.stdout) as EvalReport;
    expect(report.resolved_ids).toEqual([]);
    expect(report.unresolved_ids.sort()).toEqual(chosen.map((i) => i.instance_id).sort());
  });

  test('itsdangerous with --specs: every run reaches the Planner; a broken environment is an error instance, never an empty patch', async () => {
    // Its src layout needs PYTHONPATH=src for the agent's runs too (the instances' test_cmd says so
    // only to the evaluation). A copy of one instance under another repository name, whose setup
    // command fails on purpose, stands for a repository whose environment cannot be made.
    const ours = instances.filter((i) => i.repo === 'pallets/itsdangerous');
    expect(ours).toHaveLength(4);
    const broken = { ...ours[0]!, instance_id: 'broken__itsdangerous-1', repo: 'broken/itsdangerous' };
    const file = path.join(scratch, 'itsdangerous.jsonl');
    fs.writeFileSync(file, [...ours, broken].map((i) => JSON.stringify(i)).join('\n'));
    const repos = path.join(scratch, 'specs-repos');
    fs.mkdirSync(repos);
    const bundle = path.join(REPOS, 'pallets__itsdangerous.bundle');
    fs.symlinkSync(bundle, path.join(repos, 'pallets__itsdangerous.bundle'));
    fs.symlinkSync(bundle, path.join(repos, 'broken__itsdangerous.bundle'));
    const specs = path.join(scratch, 'specs.json');
    fs.writeFileSync(
      specs,
      JSON.stringify({
        'pallets/itsdangerous': { env: { PYTHONPATH: 'src' } },
        'broken/itsdangerous': { setupCommand: 'echo broken on purpose; exit 3' },
      }),
    );
    const ids = ours.map((i) => i.instance_id).sort();
    const common = ['eval', file, '--repos', repos, '--specs', specs, '--concurrency', '3', '--json'];

    const gold = await runCli(
      [...common, '--predictions', 'gold', '--id', `swe-specs-gold-${RUN}`],
      h.cliEnv(),
    );
    expect(gold.code).toBe(0);
    const goldReport = JSON.parse(gold.stdout) as EvalReport;
    expect(goldReport.resolved_ids.sort()).toEqual(ids);
    expect(goldReport.error_ids).toEqual([broken.instance_id]);
    expect(goldReport.empty_patch_ids).toEqual([]);

    const agent = await runCli(
      [...common, '--model', 'scripted', '--max-iterations', '1', '--id', `swe-specs-agent-${RUN}`],
      h.cliEnv(),
      900_000,
    );
    expect(agent.code).toBe(0);
    const report = JSON.parse(agent.stdout) as EvalReport;
    expect(report.resolved_ids.sort()).toEqual(ids);
    expect(report.error_ids).toEqual([broken.instance_id]);
    expect(report.empty_patch_ids).toEqual([]);
    const rows = new Map(report.instances!.map((row) => [row.instance_id, row]));
    expect([...rows.keys()].sort()).toEqual([...ids, broken.instance_id].sort());
    for (const id of ids) {
      // Past its baseline: a Planner and a Coder's attempt; at one attempt, its own suite decides SUCCESS or FAILED.
      expect(rows.get(id)).toMatchObject({ resolved: true, failed_tests: [] });
      expect(['SUCCESS', 'FAILED']).toContain(rows.get(id)!.state);
      // The row says how the run ended, even when its patch resolved the instance.
      expect(rows.get(id)!.reason).toBe(rows.get(id)!.state === 'SUCCESS' ? null : 'max_iterations');
      expect(rows.get(id)!.iterations).toBeGreaterThanOrEqual(1);
    }
    expect(rows.get(broken.instance_id)).toMatchObject({ state: 'FAILED', resolved: false, iterations: 0 });
    expect(rows.get(broken.instance_id)!.reason).toMatch(/\(error\).*setup command .*failed/);
    // Each run of the four reached the Planner: a model request holds its problem statement.
    for (const instance of ours) {
      expect(h.llm.requests.some((r) => r.agent === 'planner' && r.scenario === instance.instance_id)).toBe(
        true,
      );
    }
  }, 900_000);

  test('the agent writing the gold patch resolves an instance of each layout; no request holds a patch, a test patch or the test lists', async () => {
    // One instance of each repository layout and test command: toolz's package tests and its
    // sandbox folder, itsdangerous's src layout (PYTHONPATH=src) and its older single module.
    // Each agent run judges its repository's whole suite in the verdict process, at its baseline
    // and at its attempt: all twelve take minutes, which the gold case above covers.
    const chosen = instances.filter((i) =>
      ['3705d6ad7b', 'e90e362ed8', '526b1ea029', 'ce5e2cd0af'].some((id) => i.instance_id.endsWith(id)),
    );
    expect(chosen).toHaveLength(4);
    const run = await runCli(
      [
        'eval',
        INSTANCES,
        '--repos',
        REPOS,
        '--only',
        chosen.map((i) => i.instance_id).join(','),
        '--model',
        'scripted',
        '--max-iterations',
        '1',
        '--id',
        `swe-agent-${RUN}`,
        '--concurrency',
        '3',
        '--json',
      ],
      h.cliEnv(),
      900_000,
    );
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as EvalReport;
    expect(report.resolved_ids.sort()).toEqual(chosen.map((i) => i.instance_id).sort());

    const text = JSON.stringify(h.llm.requests.map((r) => r.messages));
    expect(h.llm.requests.length).toBeGreaterThanOrEqual(chosen.length * 3);
    for (const instance of instances) {
      for (const secret of [
        instance.patch,
        instance.test_patch,
        JSON.stringify(instance.FAIL_TO_PASS),
        JSON.stringify(instance.PASS_TO_PASS),
      ]) {
        expect(text.includes(JSON.stringify(secret).slice(1, -1))).toBe(false);
      }
      // A test the test patch adds or changes, named as the evaluation names it.
      for (const id of instance.FAIL_TO_PASS) expect(text.includes(id)).toBe(false);
    }
  }, 300_000);
});
