/**
 * `npm run bench` runs the benchmarks from the sources (bench/main.ts through tsx), outside the
 * product: its usage, and bad arguments refused with exit 2 and one line before anything starts.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBench } from '../../bench/main';

const ROOT = path.resolve(__dirname, '..', '..');

function npmRunBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'bench', '--', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run bench', () => {
  test('--help prints the usage with every part and exits 0', async () => {
    const outcome = await npmRunBench(['--help']);
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^Usage: npm run bench -- \[options\] \[parts\.\.\.\]/);
    for (const part of ['overhead', 'concurrency', 'sandbox', 'search', 'repo', 'store', 'history', 'edit'])
      expect(outcome.stdout).toMatch(new RegExp(`^  ${part} `, 'm'));
  }, 60_000);

  test('an unknown part exits 2 with one line naming the parts', async () => {
    const outcome = await npmRunBench(['overhead', 'nosuch']);
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^bench: unknown benchmark part "nosuch"; choose from all, overhead, /),
    ]);
  }, 60_000);

  test.each([
    [['sandbox', '--reps', '0'], /^bench: --reps must be a whole number of at least 1, got "0"$/],
    [['sandbox', '--frobnicate'], /^bench: unknown option '--frobnicate'$/],
    [['overhead', '--live'], /^bench: --live applies to the humaneval part only/],
    [['overhead', '--delay-ms', '3000,soon'], /^bench: --delay-ms must be a whole number, got "soon"$/],
    [['overhead', '--against', 'no-such-commit'], /^bench: --against no-such-commit: no such commit in /],
    [['overhead', '--against', '--strict'], /^bench: --against --strict: not a commit$/],
    [['sandbox', '--against', 'HEAD'], /^bench: --against applies to the overhead part/],
  ])('%j exits 2 with one line and writes nothing', async (args, message) => {
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-bench-args-'));
    try {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runBench([...args, '--out', outDir], {
        out: (l) => out.push(l),
        progress: (l) => err.push(l),
      });
      expect(code).toBe(2);
      expect(out).toEqual([]);
      expect(err).toEqual([expect.stringMatching(message)]);
      expect(fs.readdirSync(outDir)).toEqual([]);
    } finally {
      fs.rmSync(outDir, { recursive: true, force: true });
    }
  });
});
