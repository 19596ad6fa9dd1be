/**
 * Checks of what aca needs on the machine that runs its worker. Each returns one CheckResult and
 * never throws: preflight and `aca doctor` print every result, so one broken probe must not hide
 * the others.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { HOST_TOOL_ENV } from '../shared/executables';
import { programLookup, type AcaConfig } from '../config';
import { lockDataDir } from '../memory/data-dir-lock';
import { MemoryLockedError } from '../memory/memory-errors';
import { embeddedDataDir } from '../memory/open-memory';
import { BARE_WARNING, checkSandboxAvailable, findExecutable, isRoot, PYTHON } from '../sandbox';
import { isTemporalReachable } from '../temporal/dev-server';
import { findTemporalCli, TEMPORAL_CLI_MODULE, TEMPORAL_CLI_VERSION } from '../temporal/temporal-cli';
import { aptInstallCommand, type CheckResult } from './check-result';

/** What the checks look at; tests replace parts of it to hide a prerequisite. */
export interface HostCheckEnv {
  /** PATH searched for git, go and bwrap. */
  searchPath: string;
  /** The interpreter the sandbox runs pytest with. */
  python: string;
  asRoot: boolean;
  /** Resolves a package of aca's own install (Jest, TypeScript). */
  resolvePackage: (name: string) => string;
}

export function defaultHostCheckEnv(): HostCheckEnv {
  return {
    searchPath: programLookup().searchPath,
    python: PYTHON,
    asRoot: isRoot(),
    resolvePackage: (name) => require.resolve(`${name}/package.json`),
  };
}

function fixWithApt(
  env: HostCheckEnv,
  packages: readonly string[],
): Pick<CheckResult, 'fix' | 'debianPackages'> {
  return { fix: aptInstallCommand(packages, env.asRoot), debianPackages: packages };
}

export function checkSandbox(config: AcaConfig, env: HostCheckEnv): CheckResult {
  const name = 'sandbox';
  if (config.sandbox === 'none') return { name, status: 'warn', detail: BARE_WARNING };
  const availability = checkSandboxAvailable('bwrap');
  if (availability.ok) return { name, status: 'ok', detail: 'bubblewrap creates its namespaces here' };
  if (availability.missingPackages) {
    return {
      name,
      status: 'missing',
      detail: availability.message,
      ...fixWithApt(env, availability.missingPackages),
    };
  }
  return {
    name,
    status: 'missing',
    detail: availability.message,
    fix: 'sysctl -w kernel.unprivileged_userns_clone=1 (and kernel.apparmor_restrict_unprivileged_userns=0 where AppArmor restricts them), or run the worker as root',
  };
}

export function checkPytest(env: HostCheckEnv): CheckResult {
  const name = 'python/pytest';
  const probe = spawnSync(env.python, ['-I', '-c', 'import pytest; print(pytest.__version__)'], {
    env: HOST_TOOL_ENV,
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (probe.error) {
    return {
      name,
      status: 'missing',
      detail: `${env.python} cannot run (${probe.error.message}); Python test runs need it`,
      ...fixWithApt(env, ['python3', 'python3-pytest']),
    };
  }
  if (probe.status !== 0) {
    return {
      name,
      status: 'missing',
      detail: `${env.python} has no pytest module; Python test runs need it`,
      ...fixWithApt(env, ['python3-pytest']),
    };
  }
  return { name, status: 'ok', detail: `pytest ${probe.stdout.trim()} (${env.python})` };
}

export function checkJest(env: HostCheckEnv): CheckResult {
  const name = 'jest';
  const found: string[] = [];
  for (const pkg of ['jest', 'typescript']) {
    try {
      const manifest = env.resolvePackage(pkg);
      const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown };
      found.push(`${pkg} ${String(version)}`);
    } catch {
      return {
        name,
        status: 'missing',
        detail: `aca's own ${pkg} is not installed; TypeScript and JavaScript test runs need it`,
        fix: `npm install (in ${path.resolve(__dirname, '..', '..')})`,
      };
    }
  }
  return { name, status: 'ok', detail: found.join(', ') };
}

export function checkGit(env: HostCheckEnv): CheckResult {
  const name = 'git';
  const git = findExecutable('git', env.searchPath);
  if (!git) return { name, status: 'missing', detail: 'git is not on PATH', ...fixWithApt(env, ['git']) };
  const version = spawnSync(git, ['--version'], { env: HOST_TOOL_ENV, encoding: 'utf8', timeout: 10_000 });
  if (version.status !== 0) {
    return { name, status: 'missing', detail: `${git} --version failed`, ...fixWithApt(env, ['git']) };
  }
  return { name, status: 'ok', detail: version.stdout.trim() };
}

/**
 * util-linux's flock: runs on a repository (`--repo`) take turns at adding and removing their
 * worktrees with it (see shared/file-lock.ts). A warning, not a refusal: runs without a
 * repository never take the lock.
 */
export function checkFileLock(env: HostCheckEnv): CheckResult {
  const name = 'flock';
  const flock = findExecutable('flock', env.searchPath);
  if (flock) return { name, status: 'ok', detail: flock };
  return {
    name,
    status: 'warn',
    detail: 'flock is not on PATH; runs on a repository (--repo) cannot lock its worktrees and fail',
    ...fixWithApt(env, ['util-linux']),
  };
}

/**
 * For commands that start a dev server when none answers: a server at TEMPORAL_ADDRESS, or a CLI
 * to start one, or Go to build that CLI.
 */
export async function checkTemporalForLocalStack(config: AcaConfig, env: HostCheckEnv): Promise<CheckResult> {
  const name = 'temporal';
  if (await isTemporalReachable(config.temporalAddress, 2000)) {
    return { name, status: 'ok', detail: `a server answers at ${config.temporalAddress}` };
  }
  const lookup = { ...programLookup(), searchPath: env.searchPath };
  const explicit = lookup.temporalCli;
  const cli = findTemporalCli(lookup);
  if (explicit && cli !== explicit) {
    return {
      name,
      status: 'missing',
      detail: `TEMPORAL_CLI=${explicit} is not an executable file`,
      fix: 'unset TEMPORAL_CLI or point it at the temporal binary',
    };
  }
  if (cli) return { name, status: 'ok', detail: `dev server will start from ${cli}` };
  const go = findExecutable('go', `${env.searchPath}:/usr/local/go/bin`);
  if (go) {
    return {
      name,
      status: 'ok',
      detail: `the Temporal CLI will be built with ${go} on first use (a few minutes, once)`,
    };
  }
  return {
    name,
    status: 'missing',
    detail: `no Temporal server at ${config.temporalAddress}, no temporal CLI, and no Go to build ${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`,
    fix: 'install Go 1.23 or newer (https://go.dev/dl), put `temporal` on PATH, or set TEMPORAL_CLI=/path/to/temporal',
  };
}

/** For `aca worker`: the server must already answer. */
export async function checkTemporalReachable(config: AcaConfig): Promise<CheckResult> {
  const name = 'temporal';
  if (await isTemporalReachable(config.temporalAddress, 3000)) {
    return { name, status: 'ok', detail: `a server answers at ${config.temporalAddress}` };
  }
  return {
    name,
    status: 'unreachable',
    detail: `no Temporal server answers at ${config.temporalAddress}`,
    fix: 'start one with `aca up`, or set TEMPORAL_ADDRESS',
  };
}

/**
 * `inUse`: what a process holding the embedded database means for the command checking. For
 * `aca doctor` it is a worker at work, as it should be ('fine'); for a command that would open
 * the database itself, a conflict ('blocks').
 */
export async function checkDatabase(
  config: AcaConfig,
  inUse: 'fine' | 'blocks' = 'blocks',
): Promise<CheckResult> {
  return config.databaseUrl ? checkPostgres(config.databaseUrl) : checkEmbeddedFolder(config.home, inUse);
}

async function checkEmbeddedFolder(home: string, inUse: 'fine' | 'blocks'): Promise<CheckResult> {
  const name = 'database';
  const dir = embeddedDataDir(home);
  try {
    mkdirSync(dir, { recursive: true });
    const lock = await lockDataDir(dir);
    lock.release();
    return { name, status: 'ok', detail: `embedded (PGlite) in ${dir}` };
  } catch (err) {
    if (inUse === 'fine' && err instanceof MemoryLockedError && err.holderPid !== process.pid) {
      return {
        name,
        status: 'ok',
        detail: `embedded (PGlite) in ${dir}, in use by process ${err.holderPid} (a worker or aca up; runs reach it through that worker)`,
      };
    }
    return {
      name,
      status: 'missing',
      detail: `the embedded database in ${dir} cannot be opened: ${(err as Error).message}`,
      fix: 'stop the other aca worker using it, set ACA_HOME to another folder, or set DATABASE_URL',
    };
  }
}

async function checkPostgres(databaseUrl: string): Promise<CheckResult> {
  const name = 'database';
  const where = redactUrl(databaseUrl);
  const { Client } = await import('pg');
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    return {
      name,
      status: 'unreachable',
      detail: `cannot reach PostgreSQL at ${where} (${(err as Error).message})`,
      fix: 'start the server or correct DATABASE_URL; unset it to use the embedded database',
    };
  }
  try {
    const found = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'");
    if (found.rowCount === 0) {
      return {
        name,
        status: 'missing',
        detail: `PostgreSQL at ${where} has no pg_trgm extension (failure memory's similarity search needs it)`,
        fix: "install the server's contrib package (Debian: apt-get install -y postgresql-contrib)",
      };
    }
    return { name, status: 'ok', detail: `PostgreSQL at ${where}, pg_trgm available` };
  } catch (err) {
    return {
      name,
      status: 'unreachable',
      detail: `PostgreSQL at ${where} refused a query (${(err as Error).message})`,
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The URL without its password: the check's line may be pasted into an issue. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable DATABASE_URL)';
  }
}
