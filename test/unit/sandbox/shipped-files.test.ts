/**
 * The Python and JavaScript aca runs in and beside the test process are files of their own
 * (src/sandbox/shipped-files.ts): each must exist, compile, and be copied into dist/ by the build
 * (which the test command runs before the suite).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PYTHON, SHIPPED_FILES, shippedFile, shippedFilePath, type ShippedFile } from '../../../src/sandbox';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SANDBOX_SRC = path.join(ROOT, 'src', 'sandbox');
const entries = Object.entries(SHIPPED_FILES) as [ShippedFile, string][];

describe('files shipped with the sandbox', () => {
  test('every .py and .cjs file under src/sandbox is one of them, and each exists', () => {
    const onDisk = fs
      .readdirSync(SANDBOX_SRC, { recursive: true, encoding: 'utf8' })
      .filter((file) => /\.(py|cjs)$/.test(file))
      .sort();
    expect(onDisk).toEqual(entries.map(([, file]) => file).sort());
    for (const [name, file] of entries) {
      expect(shippedFilePath(name)).toBe(path.join(SANDBOX_SRC, file));
      expect(shippedFile(name)).toBe(fs.readFileSync(path.join(SANDBOX_SRC, file), 'utf8'));
    }
  });

  test.each(entries.filter(([, file]) => file.endsWith('.py')))('%s compiles (%s)', (name) => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-py-compile-'));
    try {
      const script =
        'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)';
      execFileSync(PYTHON, ['-I', '-c', script, shippedFilePath(name), path.join(cache, 'out.pyc')], {
        stdio: 'pipe',
      });
    } finally {
      fs.rmSync(cache, { recursive: true, force: true });
    }
  });

  test.each(entries.filter(([, file]) => file.endsWith('.cjs')))('%s parses (%s)', (name) => {
    execFileSync(process.execPath, ['--check', shippedFilePath(name)], { stdio: 'pipe' });
  });

  test('the build copied each into dist/, unchanged', () => {
    for (const [, file] of entries) {
      const built = path.join(ROOT, 'dist', 'sandbox', file);
      expect(fs.existsSync(built) ? fs.readFileSync(built, 'utf8') : `${built} is missing`).toBe(
        fs.readFileSync(path.join(SANDBOX_SRC, file), 'utf8'),
      );
    }
  });
});

describe('files beside the modules that load them', () => {
  // The spawn helper and the embedded database's thread run as plain CommonJS outside the
  // sandbox; a build that left one out of dist/ would break only the installed package.
  const SRC = path.join(ROOT, 'src');
  const outsideSandbox = fs
    .readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(py|cjs)$/.test(file) && !file.startsWith(`sandbox${path.sep}`))
    .sort();

  test('there are some: the spawn helper and the embedded database thread', () => {
    expect(outsideSandbox).toEqual(
      expect.arrayContaining([
        path.join('memory', 'pglite-thread.cjs'),
        path.join('process', 'spawn-helper-process.cjs'),
      ]),
    );
  });

  test.each(outsideSandbox)('%s parses and the build copied it into dist/, unchanged', (file) => {
    execFileSync(process.execPath, ['--check', path.join(SRC, file)], { stdio: 'pipe' });
    const built = path.join(ROOT, 'dist', file);
    expect(fs.existsSync(built) ? fs.readFileSync(built, 'utf8') : `${built} is missing`).toBe(
      fs.readFileSync(path.join(SRC, file), 'utf8'),
    );
  });
});
