/**
 * The first day outside the checkout: the packed package (`npm pack`) installed with npm into a
 * fresh folder, and its `aca` command used from there as a newcomer would: `aca --help`, `aca demo`,
 * then `aca run` inside a repository of theirs and `aca status` of that run. The install is offline
 * (`npm ci --offline`, from the npm cache the checkout's own install filled), so nothing at all is
 * fetched, least of all the unrelated package that owns the name `aca` on the registry.
 */
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { loadScenarios } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import { packedTarball } from '../helpers/packed-package';
import { makeRepo, removeFixtureRepos } from '../helpers/repo-fixtures';
import { demoRunArgs, type CliOutcome } from '../helpers/run-cli';

const execute = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

interface LockEntry {
  version?: string;
  dev?: boolean;
  [key: string]: unknown;
}
interface Manifest {
  name: string;
  version: string;
  license?: string;
  bin: Record<string, string>;
  engines?: Record<string, string>;
  dependencies: Record<string, string>;
  overrides?: Record<string, Record<string, string>>;
}

/**
 * A user's folder whose one dependency is the packed tarball, with a lock that pins every other
 * package to the version the checkout was tested with (what `npm install -g .` from the checkout
 * would install). npm applies only the installing project's overrides, so the checkout's are
 * repeated here, each `$name` reference as the version it stands for.
 */
function writeUserProject(dir: string, tarball: string): void {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Manifest;
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const locked = (name: string) => lock.packages[`node_modules/${name}`]?.version ?? name;
  const overrides = Object.fromEntries(
    Object.entries(manifest.overrides ?? {}).map(([pkg, deps]) => [
      pkg,
      Object.fromEntries(
        Object.entries(deps).map(([dep, spec]) => [dep, spec.startsWith('$') ? locked(spec.slice(1)) : spec]),
      ),
    ]),
  );
  const dependencies = { [manifest.name]: `file:${tarball}` };
  const packages: Record<string, unknown> = {
    '': { name: 'my-tools', dependencies },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: `file:${tarball}`,
      license: manifest.license,
      dependencies: manifest.dependencies,
      bin: manifest.bin,
      engines: manifest.engines,
    },
  };
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where && !entry.dev) packages[where] = entry;
  }
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'my-tools', private: true, dependencies, overrides }, null, 2),
  );
  fs.writeFileSync(
    path.join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'my-tools', lockfileVersion: 3, requires: true, packages }, null, 2),
  );
}

/** `aca` as found on PATH, from the folder `cwd`. */
function aca(
  bin: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeoutMs = 180_000,
): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn('aca', args, {
      cwd,
      env: { ...process.env, ...env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`aca ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('the packed package installed outside the checkout', () => {
  const place = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-packed-'));
  const tools = path.join(place, 'tools');
  const bin = path.join(tools, 'node_modules', '.bin');
  const npmLogs = path.join(place, 'npm-logs');
  let h: Harness;
  let installSeconds = 0;

  beforeAll(async () => {
    fs.mkdirSync(tools);
    const started = Date.now();
    writeUserProject(tools, await packedTarball());
    try {
      await execute(
        'npm',
        [
          'ci',
          '--offline',
          '--omit=dev',
          '--ignore-scripts',
          '--no-audit',
          '--no-fund',
          '--loglevel=http',
          `--logs-dir=${npmLogs}`,
        ],
        { cwd: tools, timeout: 300_000 },
      );
    } catch (err) {
      const { stderr } = err as { stderr?: string };
      throw new Error(
        `npm ci --offline failed (a package missing from the npm cache? \`npm install\` in the checkout fills it):\n${stderr ?? String(err)}`,
      );
    }
    installSeconds = (Date.now() - started) / 1000;
    h = await createHarness({ scenarios: loadScenarios() });
    await h.startWorker();
  }, 420_000);

  afterAll(async () => {
    await h?.close();
    removeFixtureRepos();
    fs.rmSync(place, { recursive: true, force: true });
  });

  test('npm installs it under its own name with the aca command, fetching nothing', () => {
    const manifest = JSON.parse(
      fs.readFileSync(path.join(tools, 'node_modules', 'aca-agent', 'package.json'), 'utf8'),
    ) as Manifest;
    expect(manifest.name).toBe('aca-agent');
    expect(manifest.bin).toEqual({ aca: 'bin/aca.js' });
    // The task limit and its error are part of the library's surface.
    const library = createRequire(path.join(tools, 'package.json'))('aca-agent') as Record<string, unknown>;
    expect(library.MAX_TASK_BYTES).toBe(64 * 1024);
    expect(typeof library.TaskTooLargeError).toBe('function');
    expect(fs.realpathSync(path.join(bin, 'aca'))).toBe(
      path.join(fs.realpathSync(tools), 'node_modules', 'aca-agent', 'bin', 'aca.js'),
    );
    // The unrelated registry package of that name is nowhere: not installed, not asked for.
    expect(fs.existsSync(path.join(tools, 'node_modules', 'aca'))).toBe(false);
    const log = fs
      .readdirSync(npmLogs)
      .map((file) => fs.readFileSync(path.join(npmLogs, file), 'utf8'))
      .join('\n');
    expect(log).toContain('npm ci');
    expect(log).not.toMatch(/https?:\/\/\S+\/aca(?:[/?#\s]|$)/m);
    // Offline, npm reads what it knows from its cache ("cache stale", "cache hit"): never the network.
    const fetches = log.split('\n').filter((line) => /http fetch /.test(line));
    expect(fetches.filter((line) => !/\(cache (stale|hit)\)\s*$/.test(line))).toEqual([]);
    // Packing and installing, for docs/testing.md's budget: printed, not asserted (speed goals live in bench/).
    process.stderr.write(`packed and installed in ${installSeconds.toFixed(1)} s\n`);
  });

  test('aca --help, from a folder outside the checkout', async () => {
    const r = await aca(bin, ['--help'], {}, place);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: aca /);
    expect(r.stdout).toMatch(/^ {2}demo /m);
  });

  test('aca demo runs the offline scenario to SUCCESS', async () => {
    const r = await aca(
      bin,
      ['demo'],
      {
        TEMPORAL_ADDRESS: h.cliEnv().TEMPORAL_ADDRESS,
        TEMPORAL_NAMESPACE: h.cliEnv().TEMPORAL_NAMESPACE,
        ACA_HOME: path.join(place, 'demo-home'),
      },
      place,
    );
    expect(r.stderr).not.toMatch(/^aca: /m);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^SUCCESS after 2 iterations/m);
  });

  test('aca run inside a repository of the user works on it; aca status without an id reads that run', async () => {
    const repo = makeRepo({ 'README.md': 'my project\n' });
    const id = `packed-${process.pid}`;
    const r = await aca(bin, [...demoRunArgs(id), '--json'], h.cliEnv(), repo);
    expect(r.stderr).toContain(`Working on the repository at ${fs.realpathSync(repo)}`);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as RunResult;
    expect(result).toMatchObject({ state: 'SUCCESS', repo: fs.realpathSync(repo), branch: `aca/${id}` });
    // From the repository, without an id: the latest run started there.
    const status = await aca(bin, ['status'], h.cliEnv(), repo);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^${id}: SUCCESS$`, 'm'));
  });
});
