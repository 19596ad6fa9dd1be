import * as fs from 'node:fs';
import type { DependencyFolder } from '../../shared/test-command';
import { acceptanceFolders, type AcceptanceFiles } from '../verdicts/acceptance';
import {
  bwrapArgs,
  SANDBOX_NODE,
  SANDBOX_OUTPUT,
  SANDBOX_RUNNER_DIR,
  SANDBOX_WORKSPACE,
} from './bwrap-profile';
import type { SandboxLimits } from './limits';
import { runnerFiles } from './runner-files';
import { DENIED_SYSCALLS, seccompArchOf, type SeccompArch } from './seccomp-filter';
import { keyringJoinPrefix } from './session-keyring';
import type { RunnerPaths } from '../runners/runner';

/** Host tools the bubblewrap path needs; resolved once by availability.ts. */
export interface BwrapTools {
  bwrap: string;
  /** Only needed when the worker is root and there is no perl (see bwrapCommand). */
  unshare?: string;
  mount?: string;
  setpriv?: string;
  /** Launcher for the fresh session keyring (session-keyring.ts); python is the fallback. */
  perl?: string;
  python?: string;
}

/** The fd on which bwrap reads the seccomp filter; 3 is the results channel. */
const SECCOMP_FD = 9;

/** Syscalls the perl launcher makes besides those of seccomp-filter.ts (numbers as there). */
const LAUNCH_SYSCALLS: Readonly<Record<string, { x64: number; arm64: number }>> = {
  setgroups: { x64: 116, arm64: 159 },
  setresuid: { x64: 117, arm64: 147 },
  setresgid: { x64: 119, arm64: 149 },
  dup3: { x64: 292, arm64: 24 },
};

/**
 * The whole host-side launch chain in one perl process: a private mount namespace, the staging
 * bind mounts, the seccomp filter opened on its fd, the drop to the sandbox uid (groups cleared),
 * a new session keyring, then exec of bwrap. The same steps as `unshare`, `sh`, one `mount` per
 * staged folder, `setpriv` and the keyring launcher, without their five or more program starts
 * (mount alone reads the host's whole mount table): several milliseconds of every test run.
 * Arguments: the syscall numbers, uid ('' for none: no namespace, mounts or uid change), filter
 * ('' for none), the number of staged pairs, the pairs (source, mount point), then bwrap's argv.
 */
const PERL_LAUNCH = [
  'my ($unshare, $mount, $setgroups, $setresgid, $setresuid, $dup3, $keyctl, $uid, $filter, $n) = splice(@ARGV, 0, 10);',
  'sub ok { $_[0] >= 0 or die "aca: cannot $_[1]: $!\n" }',
  'if ($uid ne "") {',
  // CLONE_NEWNS; then MS_REC | MS_PRIVATE on / (what `unshare --mount --propagation private` does).
  '  ok(syscall($unshare + 0, 0x20000), "enter a mount namespace of its own");',
  // syscall passes strings by pointer and needs them writable: copies, not literals.
  '  my ($none, $root) = ("none", "/");',
  '  ok(syscall($mount + 0, $none, $root, 0, 0x44000, 0), "make its mounts private");',
  // MS_BIND, not recursive (what `mount --bind` does).
  '  for (1 .. $n) { my ($src, $dest) = splice(@ARGV, 0, 2); ok(syscall($mount + 0, $src, $dest, 0, 4096, 0), "bind $src to $dest"); }',
  '}',
  // dup3 with no flags: the filter stays open across exec, on exactly the fd bwrap is told (F_SETFD
  // clears close-on-exec where perl happened to open it there).
  'if ($filter ne "") {',
  '  open(my $fh, "<", $filter) or die "aca: cannot open $filter: $!\\n";',
  `  if (fileno($fh) == ${SECCOMP_FD}) { defined(fcntl($fh, 2, 0)) or die "aca: cannot keep the seccomp filter open: $!\\n"; }`,
  `  else { ok(syscall($dup3 + 0, fileno($fh), ${SECCOMP_FD}, 0), "open the seccomp filter"); }`,
  '}',
  'if ($uid ne "") {',
  '  ok(syscall($setgroups + 0, 0, 0), "clear the supplementary groups");',
  '  ok(syscall($setresgid + 0, $uid + 0, $uid + 0, $uid + 0), "change group");',
  '  ok(syscall($setresuid + 0, $uid + 0, $uid + 0, $uid + 0), "change user");',
  '}',
  // KEYCTL_JOIN_SESSION_KEYRING with no name, as the sandbox uid (session-keyring.ts).
  'ok(syscall($keyctl + 0, 1, 0), "join a new session keyring");',
  'exec { $ARGV[0] } @ARGV or die "aca: cannot start $ARGV[0]: $!\n";',
].join('\n');

function perlLaunch(
  perl: string,
  arch: SeccompArch,
  uid: number | undefined,
  filter: string | null,
  staged: { src: string; via: string }[],
  sandbox: string[],
): { command: string; args: string[] } {
  const numbers = [
    DENIED_SYSCALLS.unshare,
    DENIED_SYSCALLS.mount,
    LAUNCH_SYSCALLS.setgroups,
    LAUNCH_SYSCALLS.setresgid,
    LAUNCH_SYSCALLS.setresuid,
    LAUNCH_SYSCALLS.dup3,
    DENIED_SYSCALLS.keyctl,
  ].map((n) => String(n![arch]));
  return {
    command: perl,
    args: [
      '-e',
      PERL_LAUNCH,
      ...numbers,
      uid === undefined ? '' : String(uid),
      filter ?? '',
      String(staged.length),
      ...staged.flatMap(({ src, via }) => [src, via]),
      ...sandbox,
    ],
  };
}

export const SANDBOX_PATHS: RunnerPaths = {
  workspace: SANDBOX_WORKSPACE,
  runnerDir: SANDBOX_RUNNER_DIR,
  node: SANDBOX_NODE,
  tmp: '/tmp',
  output: SANDBOX_OUTPUT,
};

export interface BwrapLaunchInput {
  tools: BwrapTools;
  /** Share the host's network namespace (an explicitly allowed setup command only). */
  network?: boolean;
  /** Host workspace folder (real path). */
  workspace: string;
  /** The workspace, and the acceptance folders in it, bound read-only: nothing there can change. */
  readOnly?: boolean;
  /** Host folder, fresh for this run, where the runner writes its report. */
  outputDir?: string;
  /** The user's acceptance tests, mounted read-only over their workspace copies. */
  acceptance?: AcceptanceFiles;
  /**
   * The repository's dependency folders, mounted read-only at their place in the workspace (onto
   * empty folders there: see prepareMountPoints in dependency-folders.ts).
   */
  dependencies?: DependencyFolder[];
  /** Workspace-relative folders inside dependency folders that get a private tmpfs (bwrap-profile.ts). */
  scratch?: string[];
  needsNode: boolean;
  limits: SandboxLimits;
  env: Record<string, string>;
  argv: string[];
  /** Host uid the sandbox runs as when the worker is root. */
  uid?: number;
}

/**
 * The command that starts the sandbox: bwrap behind a launcher that opens the seccomp filter on
 * its fd and joins a new session keyring (perl, PERL_LAUNCH; without perl, sh and the keyring
 * launcher). As root the launcher does more, because bwrap must run as the unprivileged
 * sandbox uid (RLIMIT_NPROC is not enforced for uid 0) and that uid cannot
 * reach host paths under folders like /root (mode 0700). So root first enters a
 * private mount namespace, bind-mounts the workspace, node_modules, node and the
 * repository's dependency folders onto empty mount points under a
 * world-traversable folder, and only then drops to the sandbox uid and execs bwrap. The staging mounts live only in that namespace and
 * vanish with it: the host mount table is never touched.
 */
export function bwrapCommand(input: BwrapLaunchInput): { command: string; args: string[] } {
  const files = runnerFiles();
  const realNode = fs.realpathSync(process.execPath);
  const staged: { src: string; via: string }[] = [];
  const source = (src: string, via: string): string => {
    if (input.uid === undefined) return src;
    staged.push({ src, via });
    return via;
  };

  const workspace = source(input.workspace, files.mountPoints.workspace);
  const writable: { src: string; dest: string }[] = [];
  if (input.outputDir) {
    writable.push({ src: source(input.outputDir, files.mountPoints.output), dest: SANDBOX_OUTPUT });
  }
  const readOnly: { src: string; dest: string }[] = [
    { src: files.etc.passwd, dest: '/etc/passwd' },
    { src: files.etc.group, dest: '/etc/group' },
    { src: files.etc.hosts, dest: '/etc/hosts' },
    // Without this file glibc asks DNS too, which only a networked setup command may do.
    ...(input.network ? [] : [{ src: files.etc.nsswitch, dest: '/etc/nsswitch.conf' }]),
    { src: files.pytestPlugin, dest: `${SANDBOX_RUNNER_DIR}/aca_results.py` },
    { src: files.pytestIni, dest: `${SANDBOX_RUNNER_DIR}/pytest.ini` },
    { src: files.jestReporter, dest: `${SANDBOX_RUNNER_DIR}/aca-results-reporter.js` },
  ];
  const dependencies = input.dependencies ?? [];
  if (dependencies.length > files.mountPoints.dependencies.length) {
    throw new Error(
      `at most ${files.mountPoints.dependencies.length} dependency folders can be mounted, got ${dependencies.length}`,
    );
  }
  dependencies.forEach((dep, i) => {
    readOnly.push({
      src: source(dep.hostPath, files.mountPoints.dependencies[i]),
      dest: `${SANDBOX_WORKSPACE}/${dep.relative}`,
    });
  });
  if (input.acceptance) {
    // Each folder above an acceptance test becomes a mount point (renaming or removing one
    // fails with EBUSY), then each test is covered by its original, read-only. A read-only
    // workspace needs no such folders: nothing in it can be renamed at all.
    const folders = input.readOnly ? [] : acceptanceFolders(input.acceptance);
    for (const folder of folders) {
      writable.push({ src: `${workspace}/${folder}`, dest: `${SANDBOX_WORKSPACE}/${folder}` });
    }
    const originals = source(input.acceptance.sourceDir, files.mountPoints.acceptance);
    for (const file of input.acceptance.files) {
      readOnly.push({ src: `${originals}/${file}`, dest: `${SANDBOX_WORKSPACE}/${file}` });
    }
  }
  if (input.needsNode) {
    readOnly.push(
      {
        src: source(files.nodeModules, files.mountPoints.nodeModules),
        dest: `${SANDBOX_RUNNER_DIR}/node_modules`,
      },
      { src: files.transform, dest: `${SANDBOX_RUNNER_DIR}/transform.js` },
      { src: files.jestVerdictRunner, dest: `${SANDBOX_RUNNER_DIR}/aca-verdict-runner.js` },
      { src: files.jestVerdictEnvironment, dest: `${SANDBOX_RUNNER_DIR}/aca-verdict-environment.js` },
      { src: files.jestVerdictGuard, dest: `${SANDBOX_RUNNER_DIR}/aca-verdict-guard.js` },
      {
        src: files.jestVerdictTestFramework,
        dest: `${SANDBOX_RUNNER_DIR}/aca-verdict-test-framework.js`,
      },
      {
        src: files.jestVerdictAcceptanceModules,
        dest: `${SANDBOX_RUNNER_DIR}/aca-verdict-acceptance-modules.js`,
      },
      // node may live outside /usr (nvm, a tarball); mount the binary the worker itself runs.
      { src: source(realNode, files.mountPoints.node), dest: SANDBOX_NODE },
    );
  }
  const args = bwrapArgs({
    workspace,
    workspaceReadOnly: input.readOnly === true,
    writable,
    readOnly,
    scratch: (input.scratch ?? []).map((relative) => `${SANDBOX_WORKSPACE}/${relative}`),
    tmpBytes: input.limits.memoryBytes,
    env: input.env,
    argv: input.argv,
    network: input.network === true,
  });
  // bwrap installs the filter right before it execs the test command; the launcher in front of it
  // gives the sandbox an empty session keyring of its own first.
  const filter = files.seccompFilter;
  const arch = seccompArchOf();
  if (input.tools.perl && arch) {
    return perlLaunch(input.tools.perl, arch, input.uid, filter, staged, [
      input.tools.bwrap,
      ...(filter ? ['--seccomp', String(SECCOMP_FD)] : []),
      ...args,
    ]);
  }
  // Without perl: the same steps by separate programs.
  const sandbox = [
    ...keyringJoinPrefix(input.tools),
    input.tools.bwrap,
    ...(filter ? ['--seccomp', String(SECCOMP_FD)] : []),
    ...args,
  ];
  const openFilter = filter ? `exec ${SECCOMP_FD}<"$filter"` : ':';

  if (input.uid === undefined) {
    return {
      command: '/bin/sh',
      args: [
        '-c',
        `set -e; filter=$1; shift; ${openFilter}; exec "$@"`,
        'aca-sandbox',
        filter ?? '',
        ...sandbox,
      ],
    };
  }

  const { unshare, mount, setpriv } = input.tools;
  if (!unshare || !mount || !setpriv)
    throw new Error('unshare, mount and setpriv (util-linux) are needed to sandbox as root');
  const script = [
    'set -e',
    'mount_bin=$1; setpriv_bin=$2; uid=$3; filter=$4; shift 4',
    'while [ "$1" != "--" ]; do "$mount_bin" --bind -- "$1" "$2"; shift 2; done',
    'shift',
    openFilter,
    'exec "$setpriv_bin" --reuid="$uid" --regid="$uid" --clear-groups -- "$@"',
  ].join('\n');
  return {
    command: unshare,
    args: [
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      script,
      'aca-stage',
      mount,
      setpriv,
      String(input.uid),
      filter ?? '',
      ...staged.flatMap(({ src, via }) => [src, via]),
      '--',
      ...sandbox,
    ],
  };
}
