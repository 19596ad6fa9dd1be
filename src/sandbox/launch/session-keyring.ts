/**
 * A fresh, empty session keyring for the sandbox. bubblewrap keeps the caller's session keyring,
 * which under systemd or in a container holds the worker's keys and is shared by every concurrent
 * run; a process that joins a new anonymous session keyring (keyctl(KEYCTL_JOIN_SESSION_KEYRING,
 * NULL)) and then execs bwrap passes that empty one on instead. The join has to happen before
 * the seccomp filter applies, which denies keyctl itself, so it is done by a tiny launcher in the
 * host-side chain: perl (essential on Debian) or, without it, Python.
 */
import { DENIED_SYSCALLS, seccompArchOf } from './seccomp-filter';

const KEYCTL_JOIN_SESSION_KEYRING = 1;

const PERL_JOIN = [
  'my $nr = shift @ARGV;',
  `syscall($nr + 0, ${KEYCTL_JOIN_SESSION_KEYRING}, 0) >= 0 or die "aca: cannot join a new session keyring: $!\\n";`,
  'exec { $ARGV[0] } @ARGV or die "aca: cannot start $ARGV[0]: $!\\n";',
].join(' ');

const PYTHON_JOIN = [
  'import ctypes, os, sys',
  'libc = ctypes.CDLL(None, use_errno=True)',
  `if libc.syscall(int(sys.argv[1]), ${KEYCTL_JOIN_SESSION_KEYRING}, None) < 0:`,
  '    sys.exit("aca: cannot join a new session keyring: " + os.strerror(ctypes.get_errno()))',
  'os.execv(sys.argv[2], sys.argv[2:])',
].join('\n');

/** The argv prefix that joins a new session keyring and then execs what follows it. */
export function keyringJoinPrefix(tools: { perl?: string; python?: string }): string[] {
  const arch = seccompArchOf();
  if (!arch) return [];
  const nr = String(DENIED_SYSCALLS.keyctl[arch]);
  if (tools.perl) return [tools.perl, '-e', PERL_JOIN, nr];
  if (tools.python) return [tools.python, '-I', '-c', PYTHON_JOIN, nr];
  throw new Error('perl or python3 is needed to give the sandbox a keyring of its own');
}
