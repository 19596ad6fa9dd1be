/**
 * A user's TypeScript script that imports the packed library compiles under `strict`, with the
 * module resolution of today's Node projects (nodenext). @temporalio/common's
 * declarations import `ms` 3, which ships no types for its `exports`; aca's declarations carry
 * them (src/api/ms-types.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { packedTarball } from '../helpers/packed-package';

const ROOT = path.resolve(__dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const SCRIPT = `import { AcaClient, type RunResult } from 'aca';
import { createAcaWorker } from 'aca/worker';

async function main(): Promise<void> {
  const aca = await AcaClient.connect();
  const run = await aca.start({ task: 'write fizzbuzz', language: 'python' });
  const result: RunResult = await run.result();
  console.log(result.state, typeof createAcaWorker);
  await aca.close();
}
void main();
`;

describe('the library under a strict type check', () => {
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-strict-'));
    // The package as it is published (package.json's files), its dependencies the checkout's.
    const packed = await packedTarball();
    const into = path.join(dir, 'node_modules', 'aca');
    fs.mkdirSync(into, { recursive: true });
    execFileSync('tar', ['-xzf', packed, '-C', into, '--strip-components=1']);
    fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(into, 'node_modules'));
    fs.symlinkSync(
      fs.realpathSync(path.join(ROOT, 'node_modules', '@types')),
      path.join(dir, 'node_modules', '@types'),
    );
    fs.writeFileSync(path.join(dir, 'script.ts'), SCRIPT);
  }, 120_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  // nodenext, as `tsc --init` writes it (node16 and bundler fail the same way without the types).
  test('module and resolution nodenext: no error', () => {
    const [module, resolution] = ['nodenext', 'nodenext'];
    const tsc = spawnSync(
      process.execPath,
      [
        TSC,
        '--strict',
        '--noEmit',
        '--target',
        'es2022',
        '--module',
        module,
        '--moduleResolution',
        resolution,
        '--types',
        'node',
        'script.ts',
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 120_000);
});
