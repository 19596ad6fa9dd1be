/**
 * What `aca demo`, `aca up` and `aca worker` check before they start anything: a run that would
 * fail at its first test because bubblewrap is missing should fail here, in one line, instead.
 */
import type { AcaConfig } from '../config';
import { findExecutable, forgetSandboxProbe } from '../sandbox';
import { EXIT } from '../shared/exit-codes';
import { aptInstall } from './apt-install';
import { formatCheck, isBlocking, type CheckResult } from './check-result';
import {
  checkDatabase,
  checkFileLock,
  checkGit,
  checkJest,
  checkPytest,
  checkSandbox,
  checkTemporalForLocalStack,
  checkTemporalReachable,
  defaultHostCheckEnv,
  type HostCheckEnv,
} from './host-checks';

export type PreflightCommand = 'demo' | 'up' | 'worker';

export async function hostChecks(
  command: PreflightCommand | 'doctor',
  config: AcaConfig,
  env: HostCheckEnv,
): Promise<CheckResult[]> {
  return [
    checkSandbox(config, env),
    checkPytest(env),
    checkJest(env),
    checkGit(env),
    checkFileLock(env),
    command === 'worker'
      ? await checkTemporalReachable(config)
      : await checkTemporalForLocalStack(config, env),
    await checkDatabase(config, command === 'doctor' ? 'fine' : 'blocks'),
  ];
}

/** Where the checks write what they find: the CLI passes its stderr. */
export interface PreflightOutput {
  err(line: string): void;
}

export interface PreflightOptions {
  env?: HostCheckEnv;
  /** `aca demo` only: install missing Debian packages itself when it can. */
  mayInstall?: boolean;
}

/**
 * Runs the checks; prints warnings and, for what blocks the command, one line each with its fix.
 * Returns null when the command may go on, else the exit code to end with (2 for something to
 * install or configure, 3 when only a service is unreachable).
 */
export async function preflight(
  command: PreflightCommand,
  config: AcaConfig,
  io: PreflightOutput,
  options: PreflightOptions = {},
): Promise<number | null> {
  const env = options.env ?? defaultHostCheckEnv();
  let results = await hostChecks(command, config, env);
  const installable = [...new Set(results.filter(isBlocking).flatMap((r) => r.debianPackages ?? []))];
  if (installable.length > 0 && options.mayInstall) {
    const aptGet = env.asRoot ? findExecutable('apt-get', env.searchPath) : undefined;
    if (aptGet) {
      const why = results
        .filter((r) => isBlocking(r) && r.debianPackages?.length)
        .map((r) => `${r.debianPackages!.join(' ')} (${r.name})`)
        .join(', ');
      io.err(`aca ${command}: installing what is missing with apt-get: ${why}`);
      const status = await aptInstall(aptGet, installable, (line) => io.err(`  apt: ${line}`));
      io.err(`aca ${command}: apt-get install ${status === 0 ? 'finished' : `exited with ${status}`}`);
      forgetSandboxProbe();
      results = await hostChecks(command, config, env);
    }
  }
  for (const warning of results.filter((r) => r.status === 'warn'))
    io.err(`aca: warning: ${formatCheck(warning)}`);
  const blocking = results.filter(isBlocking);
  if (blocking.length === 0) return null;
  io.err(`aca ${command} cannot start; nothing was started:`);
  for (const result of blocking) io.err(`aca: ${formatCheck(result)}`);
  return blocking.every((r) => r.status === 'unreachable') ? EXIT.unreachable : EXIT.badInput;
}
