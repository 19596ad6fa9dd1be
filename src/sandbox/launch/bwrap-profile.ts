import * as fs from 'node:fs';
import { SANDBOX_INNER_UID } from './runner-files';

/** Fixed paths inside the sandbox, so runners and reports never depend on host layout. */
export const SANDBOX_WORKSPACE = '/workspace';
export const SANDBOX_RUNNER_DIR = '/opt/aca-runner';
/** In a folder of its own, which goes on PATH for `#!/usr/bin/env node` scripts and npm. */
export const SANDBOX_NODE = `${SANDBOX_RUNNER_DIR}/bin/node`;
/** Where the runner writes its report: a fresh host folder per run, outside the workspace. */
export const SANDBOX_OUTPUT = '/aca-out';

export interface BwrapProfileInput {
  /** Host path bound read-write at /workspace: the only writable host folder. */
  workspace: string;
  /** Bind the workspace read-only instead (a command that may look but not change). */
  workspaceReadOnly?: boolean;
  /** The host's network, with its resolver and CA certificates (an allowed setup command only). */
  network?: boolean;
  /** More host folders bound read-write after the workspace, in order (they may lie inside it). */
  writable: { src: string; dest: string }[];
  /** Host paths bound read-only after those, by destination inside the sandbox. */
  readOnly: { src: string; dest: string }[];
  /**
   * Folders inside read-only mounts that get a private, empty tmpfs of their own last, for tools
   * that must write there (vite's temporary config bundles in node_modules/.vite-temp).
   */
  scratch?: string[];
  /** Size of the private /tmp (tmpfs pages are memory that RLIMIT_AS does not see). */
  tmpBytes: number;
  env: Record<string, string>;
  argv: string[];
}

/** Room for what a tool writes into a scratch folder: a bundled config file or two. */
const SCRATCH_BYTES = 16 * 1024 * 1024;

/** /bin, /lib... are symlinks into /usr on merged-usr systems and real folders elsewhere; mirror either. */
const USR_SIBLINGS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** Host /etc files python and node may read; everything else of /etc (secrets, configs) stays out. */
const HOST_ETC_FILES = ['/etc/ld.so.cache', '/etc/localtime'];
/** What a program needs to resolve names and check TLS certificates, for a networked setup command. */
const NETWORK_ETC_FILES = ['/etc/resolv.conf', '/etc/ssl', '/etc/ca-certificates', '/etc/pki'];

export function bwrapArgs(input: BwrapProfileInput): string[] {
  const args: string[] = [
    // New user, pid, net, ipc, uts and cgroup namespaces: no host network (not even its loopback),
    // no host processes to see or signal.
    '--unshare-all',
    // --unshare-all only *tries* a user namespace; we require one (and --disable-userns needs it spelled out).
    '--unshare-user',
    // No nested user namespaces: less kernel surface, and no way to regain capabilities inside.
    '--disable-userns',
    // Not root inside: uid 1000 maps to an unprivileged host uid.
    '--uid',
    String(SANDBOX_INNER_UID),
    '--gid',
    String(SANDBOX_INNER_UID),
    '--hostname',
    'sandbox',
    // If the worker dies, the sandbox dies with it.
    '--die-with-parent',
    // No controlling terminal: blocks TIOCSTI input injection into the worker's terminal.
    '--new-session',
    // Nothing of the worker's environment (API keys, database URLs) crosses over.
    '--clearenv',
    '--ro-bind',
    '/usr',
    '/usr',
  ];
  for (const dir of USR_SIBLINGS) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else if (st.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  for (const file of HOST_ETC_FILES) args.push('--ro-bind-try', file, file);
  if (input.network) {
    args.splice(args.indexOf('--unshare-user') + 1, 0, '--share-net');
    for (const file of NETWORK_ETC_FILES) args.push('--ro-bind-try', file, file);
  }
  args.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(input.tmpBytes),
    '--tmpfs',
    '/tmp',
    '--size',
    String(Math.min(input.tmpBytes, 64 * 1024 * 1024)),
    '--tmpfs',
    '/dev/shm',
    input.workspaceReadOnly ? '--ro-bind' : '--bind',
    input.workspace,
    SANDBOX_WORKSPACE,
  );
  for (const { src, dest } of input.writable) args.push('--bind', src, dest);
  for (const { src, dest } of input.readOnly) args.push('--ro-bind', src, dest);
  for (const dest of input.scratch ?? []) args.push('--size', String(SCRATCH_BYTES), '--tmpfs', dest);
  for (const [name, value] of Object.entries(input.env)) args.push('--setenv', name, value);
  args.push(
    // Last: the root (and every folder bwrap created in it, such as /etc and /opt) becomes read-only.
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_WORKSPACE,
    '--',
    ...input.argv,
  );
  return args;
}
