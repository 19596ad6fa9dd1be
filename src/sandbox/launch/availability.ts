import { spawnSync } from 'node:child_process';
import type { SandboxMode } from '../../shared/types';
import { bwrapCommand, type BwrapTools } from './bwrap-launch';
import { DEFAULT_SANDBOX_LIMITS } from './limits';
import { runnerFiles } from './runner-files';
import { seccompArchOf } from './seccomp-filter';
import { pickSandboxUid } from './sandbox-user';
import { findExecutable, isRoot } from './tools';
import { programLookup } from '../../config';
import { HOST_TOOL_ENV } from '../../shared/executables';

export type SandboxAvailability =
  | { ok: true; warning?: string }
  | {
      ok: false;
      message: string;
      /** Debian packages that would fix it, when a package can. */ missingPackages?: readonly string[];
    };

export const INSTALL_HINT =
  "install bubblewrap (`apt-get install bubblewrap`), or set ACA_SANDBOX=none to run tests without a sandbox (unsafe: model-written code then runs with the worker's rights)";

export const BARE_WARNING =
  'ACA_SANDBOX=none: tests run without a sandbox; model-written code can read and write what the worker can and reach the network. Only rlimits and the wall-clock timeout apply.';

const cache = new Map<string, { result: SandboxAvailability; tools?: BwrapTools }>();

/**
 * Says whether tests can run in `mode` here. For bwrap it does not stop at
 * "the binary exists": it starts one real sandbox running /bin/true, because
 * user namespaces can be disabled by sysctl or AppArmor and bwrap then fails
 * at run time with an obscure message. The answer is cached per PATH.
 */
export function checkSandboxAvailable(mode: SandboxMode): SandboxAvailability {
  if (mode === 'none') return { ok: true, warning: BARE_WARNING };
  if (mode !== 'bwrap')
    throw new Error(`unknown sandbox mode ${JSON.stringify(mode)} (expected 'bwrap' or 'none')`);
  return probe().result;
}

/** Drops the cached answers, after something (an install) may have changed them. */
export function forgetSandboxProbe(): void {
  cache.clear();
}

export function bwrapTools(): BwrapTools | undefined {
  return probe().tools;
}

function probe(): { result: SandboxAvailability; tools?: BwrapTools } {
  const { searchPath } = programLookup();
  const key = `${searchPath}\0${isRoot()}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const entry = probeUncached(searchPath);
  cache.set(key, entry);
  return entry;
}

function probeUncached(searchPath: string): { result: SandboxAvailability; tools?: BwrapTools } {
  const bwrap = findExecutable('bwrap', searchPath);
  if (!bwrap) {
    return {
      result: {
        ok: false,
        message: `bubblewrap (bwrap) is not on PATH: ${INSTALL_HINT}`,
        missingPackages: ['bubblewrap'],
      },
    };
  }
  const tools: BwrapTools = { bwrap };
  const perl = findExecutable('perl', `${searchPath}:/usr/bin:/bin`);
  if (perl) tools.perl = perl;
  else if (findExecutable('python3', '/usr/bin')) tools.python = '/usr/bin/python3';
  // The perl launcher stages and drops privileges itself (bwrap-launch.ts).
  if (isRoot() && !(tools.perl && seccompArchOf())) {
    // util-linux tools, searched also in sbin folders that a worker's PATH may lack.
    const sbinPath = `${searchPath}:/usr/sbin:/usr/bin:/sbin:/bin`;
    for (const name of ['unshare', 'mount', 'setpriv'] as const) {
      const found = findExecutable(name, sbinPath);
      if (!found) {
        return {
          result: {
            ok: false,
            message: `${name} (util-linux) is needed to sandbox as root but is not installed: apt-get install util-linux mount, or ${INSTALL_HINT}`,
            missingPackages: ['util-linux', 'mount'],
          },
        };
      }
      tools[name] = found;
    }
  }
  const files = runnerFiles();
  const { command, args } = bwrapCommand({
    tools,
    workspace: files.mountPoints.workspace,
    needsNode: false,
    limits: DEFAULT_SANDBOX_LIMITS,
    env: { PATH: '/usr/bin:/bin' },
    argv: ['/bin/true'],
    ...(isRoot() ? { uid: pickSandboxUid() } : {}),
  });
  const run = spawnSync(command, args, { env: HOST_TOOL_ENV, timeout: 15_000, encoding: 'utf8' });
  if (run.error || run.status !== 0) {
    const why = (run.error?.message ?? run.stderr ?? '').trim() || `exit status ${String(run.status)}`;
    return {
      result: {
        ok: false,
        message: `bubblewrap is installed but cannot create a sandbox here (${why}). Unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1, or AppArmor's kernel.apparmor_restrict_unprivileged_userns=0); otherwise ${INSTALL_HINT}`,
      },
    };
  }
  return { result: { ok: true }, tools };
}
