/**
 * The worker's image installs the production dependencies alone (`npm prune --omit=dev`). The
 * sandbox runs each project's Jest with aca's own TypeScript transform, so jest and typescript
 * must survive that prune. This builds the same install in a temporary folder, from the packages
 * already here (hard links, then a prune that only removes: no network), and runs a sandboxed
 * pytest and a sandboxed Jest suite from it.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { makeWorkspace, removeWorkspaces } from '../../helpers/workspace-fixture';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('the production dependency set alone', () => {
  const install = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-prod-install-'));

  beforeAll(async () => {
    // As root the sandbox runs as another uid, which reads aca's runner files from this install.
    fs.chmodSync(install, 0o755);
    for (const file of ['package.json', 'package-lock.json']) {
      fs.copyFileSync(path.join(ROOT, file), path.join(install, file));
    }
    for (const dir of ['dist', 'bin', 'scenarios']) {
      fs.cpSync(path.join(ROOT, dir), path.join(install, dir), { recursive: true });
    }
    await run('cp', ['-al', path.join(ROOT, 'node_modules'), path.join(install, 'node_modules')]);
    await run('npm', ['prune', '--omit=dev', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: install,
      timeout: 180_000,
    });
  }, 240_000);

  afterAll(() => {
    removeWorkspaces();
    fs.rmSync(install, { recursive: true, force: true });
  });

  test('the prune removed the development tools and kept what test runs need', () => {
    expect(fs.existsSync(path.join(install, 'node_modules', 'eslint'))).toBe(false);
    expect(fs.existsSync(path.join(install, 'node_modules', 'prettier'))).toBe(false);
    expect(fs.existsSync(path.join(install, 'node_modules', 'jest', 'package.json'))).toBe(true);
    expect(fs.existsSync(path.join(install, 'node_modules', 'typescript', 'package.json'))).toBe(true);
  });

  test.each([
    [
      'python',
      {
        'calc.py': 'def add(a, b):\n    return a + b\n',
        'test_calc.py': 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
      },
    ],
    [
      'typescript',
      {
        'src/calc.ts': 'export const add = (a: number, b: number): number => a + b;\n',
        'src/calc.test.ts':
          "import { add } from './calc';\n\ntest('adds', () => {\n  expect(add(2, 3)).toBe(5);\n});\n",
      },
    ],
  ])('a sandboxed %s suite passes when run from that install', async (language, files) => {
    const workspace = makeWorkspace(files);
    const script = `
      require(${JSON.stringify(path.join(install, 'dist', 'sandbox', 'index.js'))})
        .runTestSuite({ workspace: ${JSON.stringify(workspace)}, language: ${JSON.stringify(language)}, mode: 'bwrap' })
        .then((r) => { console.log(JSON.stringify(r)); process.exit(0); }, (e) => { console.error(e); process.exit(1); });`;
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: install, timeout: 120_000 });
    const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      outcome: string;
      passed: number;
      passRate: number;
    };
    expect(report).toMatchObject({ outcome: 'completed', passed: 1, passRate: 1 });
  });
});
