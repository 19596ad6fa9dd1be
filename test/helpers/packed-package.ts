/**
 * The package as `npm pack` makes it (package.json's `files`, from the dist/ the test command
 * built), packed once per test run for every suite that installs it: the file lives in the folder
 * the global setup names (ACA_TEST_BUNDLE_DIR), which the whole run shares. Suites running side by
 * side may both pack before either has the file; each packs into a folder of its own and the
 * rename makes the file whole for whoever reads it. Without that folder, each call packs anew.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const execute = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

let packing: Promise<string> | undefined;

/** The path of the packed tarball (`aca-agent-<version>.tgz`); read it, never change it. */
export function packedTarball(): Promise<string> {
  packing ??= sharedPack(process.env.ACA_TEST_BUNDLE_DIR);
  return packing;
}

async function sharedPack(shared: string | undefined): Promise<string> {
  const { name, version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const file = shared ? path.join(shared, `${name}-${version}.tgz`) : null;
  if (file && fs.existsSync(file)) return file;
  const own = fs.mkdtempSync(path.join(shared ?? os.tmpdir(), 'aca-pack-'));
  const { stdout } = await execute('npm', ['pack', '--ignore-scripts', '--pack-destination', own, '--json'], {
    cwd: ROOT,
    timeout: 120_000,
  });
  const [{ filename }] = JSON.parse(stdout) as Array<{ filename: string }>;
  const packed = path.join(own, filename);
  if (!file) return packed;
  fs.renameSync(packed, file);
  fs.rmSync(own, { recursive: true, force: true });
  return file;
}
