/**
 * `npm run bench -- overhead --against <commit>`: another commit's build measured beside this one
 * in the same process, tiny (d = 10 ms, 1 run each), on the test run's Temporal server. Asserts that
 * both builds' figures are there and that the other build bundled its own workflow code from its
 * exported tree, never how fast either was.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBench } from '../../bench/main';
import type { OverheadResult } from '../../bench/overhead-bench';
import { getTestTemporal } from '../helpers/temporal-env';

const ROOT = path.resolve(__dirname, '..', '..');

describe('npm run bench -- overhead --against HEAD', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bench-against-'));
  const outDir = path.join(tmp, 'out');
  const cacheBefore = process.env.XDG_CACHE_HOME;
  const stdout: string[] = [];
  const stderr: string[] = [];
  const commit = execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  let code: number;

  beforeAll(async () => {
    getTestTemporal();
    // The exported build goes to a cache of this test's own, removed afterwards.
    process.env.XDG_CACHE_HOME = path.join(tmp, 'cache');
    code = await runBench(
      ['overhead', '--delay-ms', '10', '--runs', '1', '--against', 'HEAD', '--out', outDir],
      { out: (l) => stdout.push(l), progress: (l) => stderr.push(l) },
    );
  }, 300_000);

  afterAll(() => {
    if (cacheBefore === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = cacheBefore;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('both builds measured, the other from its own exported tree', () => {
    if (code !== 0) console.error(`stdout:\n${stdout.join('\n')}\nstderr:\n${stderr.join('\n')}`);
    expect(code).toBe(0);
    const r = JSON.parse(fs.readFileSync(path.join(outDir, 'overhead.json'), 'utf8')) as OverheadResult;
    expect(r.builds.map((b) => b.commit)).toEqual([commit, commit]);
    expect(r.builds[1].label).toBe(commit.slice(0, 7));
    expect(r.order).toMatch(/ABBA/);
    for (const b of r.builds) {
      expect(b.byDelay.map((at) => at.delayMs)).toEqual([10]);
      const [run] = b.byDelay[0].runs;
      expect(run.testRuns).toBe(2);
      expect(run.historyEvents).toBeGreaterThan(0);
      expect(Number.isFinite(b.byDelay[0].overheadPerModelStepMs)).toBe(true);
    }
    // The two builds' runs are different workflows, each on its own worker's queue.
    expect(r.builds[0].byDelay[0].runs[0].workflowId).not.toBe(r.builds[1].byDelay[0].runs[0].workflowId);
    const tree = path.join(tmp, 'cache', 'aca', 'bench-builds', commit);
    expect(fs.readFileSync(path.join(tree, '.aca-bench-build'), 'utf8').trim()).toBe(commit);
    expect(
      stderr.some((l) => l.includes(`bundling the workflow code (${tree}/src/workflows/index.ts)`)),
    ).toBe(true);
    expect(stdout.join('\n')).toMatch(/at 10 ms: ratio [\d.]+ against [\d.]+; /);
  });
});
