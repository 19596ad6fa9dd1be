import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * When the worker runs as root, the sandbox runs as a dedicated, otherwise
 * unused host uid instead. Two reasons: RLIMIT_NPROC is never enforced for host
 * uid 0 (so a fork bomb would be unbounded), and a fresh uid owns nothing on the
 * host, so even a kernel-level slip leaves it with no files to touch and no
 * processes to signal. Each run gets its own uid so concurrent runs cannot share
 * a process budget or see each other.
 */
export const SANDBOX_UID_MIN = 1_900_000_000;
export const SANDBOX_UID_SPAN = 1_000_000;

export function isSandboxUid(uid: number): boolean {
  return uid >= SANDBOX_UID_MIN && uid < SANDBOX_UID_MIN + SANDBOX_UID_SPAN;
}

/** Picks a uid in the sandbox range that no live process uses. */
export function pickSandboxUid(): number {
  const inUse = new Set<number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      inUse.add(fs.statSync(`/proc/${entry}`).uid);
    } catch {
      // Process exited while we looked.
    }
  }
  for (;;) {
    const uid = SANDBOX_UID_MIN + Math.floor(Math.random() * SANDBOX_UID_SPAN);
    if (!inUse.has(uid)) return uid;
  }
}

export type ReleaseWorkspace = () => void;

/**
 * Hands the workspace to `uid` for the run and returns a function that gives
 * everything back to its previous owner (new files go to the workspace's owner),
 * so the host is left as it was. Never follows symlinks: the tree is walked with
 * lstat and changed with lchown, so a link planted by a test cannot redirect us.
 */
export function lendWorkspace(workspace: string, uid: number): ReleaseWorkspace {
  const owners = new Map<string, { uid: number; gid: number }>();
  walk(workspace, (file, st) => {
    owners.set(file, { uid: st.uid, gid: st.gid });
    fs.lchownSync(file, uid, uid);
  });
  const rootOwner = owners.get(workspace)!;
  return () => {
    walk(workspace, (file) => {
      const owner = owners.get(file) ?? rootOwner;
      try {
        fs.lchownSync(file, owner.uid, owner.gid);
      } catch {
        // Removed while walking; nothing to restore.
      }
    });
  };
}

function walk(root: string, visit: (file: string, st: fs.Stats) => void): void {
  const stack = [root];
  while (stack.length > 0) {
    const file = stack.pop()!;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    visit(file, st);
    if (st.isDirectory()) {
      let names: string[];
      try {
        names = fs.readdirSync(file);
      } catch {
        continue;
      }
      for (const name of names) stack.push(path.join(file, name));
    }
  }
}

/**
 * Kills every live process of a sandbox uid and waits until none is left.
 * Killing bwrap tears the pid namespace down asynchronously; the run is only
 * over, and the workspace only safe to hand back, once nothing of the uid still
 * runs. Zombies are skipped: they run nothing and only their parent (or init)
 * can remove them.
 */
export async function killUidProcesses(uid: number, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = livePidsOf(uid);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    if (Date.now() > deadline)
      throw new Error(`sandbox processes of uid ${uid} did not die: ${pids.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function livePidsOf(uid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.statSync(`/proc/${entry}`).uid !== uid) continue;
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // State is the field after the parenthesised command name.
      if (stat.charAt(stat.lastIndexOf(')') + 2) === 'Z') continue;
      pids.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}
