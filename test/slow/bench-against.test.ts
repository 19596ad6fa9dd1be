/**
 * `npm run bench:overhead -- --against <commit>`: the overhead part measures another commit beside
 * the working tree, that commit built from its own exported tree with its own workflow bundle.
 * Nightly: the second bundle alone takes a minute of a 2-core CI machine, and
 * test/bench/bench-smoke.test.ts already runs the overhead part itself in `npm test`.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBench } from '../../bench/main';
import type { OverheadResult } from '../../bench/overhead-bench';
import { programLookup } from '../../src/config';
import { workflowBundleFile } from '../helpers/agent-harness';
import { getTestTemporal } from '../helpers/temporal-env';

const ROOT = path.resolve(__dirname, '..', '..');

describe('npm run bench:overhead -- --against HEAD', () => {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bench-against-'));
  const stdout: string[] = [];
  const stderr: string[] = [];
  let code: number;
  const bundleBefore = process.env.ACA_WORKFLOW_BUNDLE;
  // HEAD's tree is exported into the cache: removed afterwards unless it was there before.
  const head = execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const headTree = path.join(programLookup().cacheHome, 'aca', 'bench-builds', head);
  const headTreeBefore = fs.existsSync(headTree);

  beforeAll(async () => {
    getTestTemporal(); // fails clearly when the global setup provided no server
    const bundle = await workflowBundleFile();
    if (bundle) process.env.ACA_WORKFLOW_BUNDLE = bundle;
    code = await runBench(
      ['overhead', '--delay-ms', '10', '--runs', '1', '--against', 'HEAD', '--out', outDir],
      { out: (l) => stdout.push(l), progress: (l) => stderr.push(l) },
    );
  }, 600_000);

  afterAll(() => {
    if (bundleBefore === undefined) delete process.env.ACA_WORKFLOW_BUNDLE;
    else process.env.ACA_WORKFLOW_BUNDLE = bundleBefore;
    fs.rmSync(outDir, { recursive: true, force: true });
    if (!headTreeBefore) fs.rmSync(headTree, { recursive: true, force: true });
  });

  test('the same figures for HEAD, built from its own exported tree', () => {
    if (code !== 0) console.error(`stdout:\n${stdout.join('\n')}\nstderr:\n${stderr.join('\n')}`);
    expect(code).toBe(0);
    const r = JSON.parse(fs.readFileSync(path.join(outDir, 'overhead.json'), 'utf8')) as OverheadResult;
    expect(r.builds.map((b) => b.commit)).toEqual([head, head]);
    expect(r.builds[1].label).toBe(head.slice(0, 7));
    expect(r.order).toMatch(/ABBA/);
    const [at] = r.builds[1].byDelay;
    expect(at.delayMs).toBe(10);
    const [run] = at.runs;
    expect(run.testRuns).toBe(2);
    expect(run.historyEvents).toBeGreaterThan(run.workflowTasks);
    expect(Number.isFinite(at.overheadPerModelStepMs)).toBe(true);
    expect(run.workflowId).not.toBe(r.builds[0].byDelay[0].runs[0].workflowId);
    expect(fs.readFileSync(path.join(headTree, '.aca-bench-build'), 'utf8').trim()).toBe(head);
    // Its worker bundled HEAD's workflow code, not the test run's bundle of the working tree.
    const bundling = `bundling the workflow code (${path.join(headTree, 'src', 'workflows', 'index.ts')})`;
    expect(stderr.some((l) => l.includes(bundling))).toBe(true);
    expect(stdout.join('\n')).toMatch(/at 10 ms: ratio [\d.]+ against [\d.]+; /);
  });
});
