/**
 * `npm run bench -- edit`: both ways of fixing the 5,000-line file run to SUCCESS and leave the file as
 * expected, and the figures come from the scripted server's counts. Asserts what the part measures
 * and that it is consistent, never a particular ratio beyond the obvious direction.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBench } from '../../bench/main';
import type { EditBenchResult } from '../../bench/edit-bench';
import { getTestTemporal } from '../helpers/temporal-env';

describe('npm run bench -- edit', () => {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bench-edit-'));
  afterAll(() => fs.rmSync(outDir, { recursive: true, force: true }));

  test('edit_file against a whole rewrite: tokens per iteration, the ratio, the JSON', async () => {
    getTestTemporal();
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runBench(['edit', '--out', outDir], {
      out: (l) => stdout.push(l),
      progress: (l) => stderr.push(l),
    });
    if (code !== 0) console.error(`stdout:\n${stdout.join('\n')}\nstderr:\n${stderr.join('\n')}`);
    expect(code).toBe(0);

    const r = JSON.parse(fs.readFileSync(path.join(outDir, 'edit.json'), 'utf8')) as EditBenchResult;
    expect(r.file).toMatchObject({ lines: 5000, bugLine: 3704 });
    // The file is over one read_file answer (100 KB), so the rewrite reads it in several windows.
    expect(r.file.bytes).toBeGreaterThan(100_000);
    expect(r.file.readWindows.length).toBeGreaterThan(1);
    expect(r.file.readWindows[0][0]).toBe(1);
    expect(r.file.readWindows.at(-1)![1]).toBe(5000);
    for (const v of [r.edit, r.rewrite]) {
      expect(v).toMatchObject({ state: 'SUCCESS', iterations: 1, fileAsExpected: true });
      expect(v.promptTokens).toBeGreaterThan(0);
      expect(v.completionTokens).toBeGreaterThan(0);
    }
    expect(r.rewrite.readFileCalls).toBe(r.file.readWindows.length);
    // Coder: read, change, finish; plus the Tester's finish. The rewrite reads once per window.
    expect(r.edit.calls).toBe(4);
    expect(r.rewrite.calls).toBe(3 + r.file.readWindows.length);
    // The rewrite writes the whole file back: its completion holds at least the file's characters / 4.
    expect(r.rewrite.completionTokens).toBeGreaterThan(r.file.bytes / 4);
    // Its prompts carry every window it read: more than the file's characters / 4.
    expect(r.rewrite.coder.promptTokens).toBeGreaterThan(r.file.bytes / 4);
    expect(r.ratio.prompt).toBeCloseTo(r.rewrite.promptTokens / r.edit.promptTokens, 1);
    expect(r.ratio.completion).toBeCloseTo(r.rewrite.completionTokens / r.edit.completionTokens, 1);
    expect(r.ratio.prompt).toBeGreaterThan(10);
    expect(r.ratio.completion).toBeGreaterThan(10);
    expect(stdout.join('\n')).toMatch(/prompt ratio \(rewrite \/ edit\)\s+\d/);
  }, 120_000);
});
