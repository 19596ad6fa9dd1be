/** What one preflight or doctor check found. */
export interface CheckResult {
  /** Short name shown at the start of the line ("bubblewrap", "database"). */
  name: string;
  status: 'ok' | 'warn' | 'missing' | 'unreachable';
  /** What was found, or what is wrong, in one line. */
  detail: string;
  /** The exact command or setting that fixes it, when something is wrong. */
  fix?: string;
  /** Debian packages that fix it, for `aca demo`'s install path. */
  debianPackages?: readonly string[];
}

export function isBlocking(result: CheckResult): boolean {
  return result.status === 'missing' || result.status === 'unreachable';
}

/** One line a person reads: `bubblewrap    missing   not on PATH; fix: apt-get install -y bubblewrap`. */
export function formatCheck(result: CheckResult): string {
  const status = result.status === 'ok' ? 'ok' : result.status;
  const fix = result.fix && result.status !== 'ok' ? `; fix: ${result.fix}` : '';
  return `${result.name.padEnd(16)} ${status.padEnd(11)} ${result.detail}${fix}`;
}

export function aptInstallCommand(packages: readonly string[], asRoot: boolean): string {
  return `${asRoot ? '' : 'sudo '}apt-get install -y ${packages.join(' ')}`;
}
