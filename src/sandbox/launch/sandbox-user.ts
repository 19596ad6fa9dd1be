import * as fs from 'node:fs';
import { sandboxUidsSetting } from '../../config';
import { UserInputError } from '../../shared/errors';

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

/**
 * The uids this process picks from: the whole range, or the part of it ACA_SANDBOX_UIDS names
 * ("first-last"). Workers (or test processes) sharing a host can each take a part of their own,
 * so that one checking that nothing of its runs' uids survives is not misled by another's runs.
 */
export function sandboxUidPool(): { min: number; span: number } {
  return parseSandboxUidPool(sandboxUidsSetting());
}

export function parseSandboxUidPool(spec: string | undefined): { min: number; span: number } {
  if (!spec) return { min: SANDBOX_UID_MIN, span: SANDBOX_UID_SPAN };
  const match = /^(\d+)-(\d+)$/.exec(spec.trim());
  const first = Number(match?.[1]);
  const last = Number(match?.[2]);
  if (!match || first > last || !isSandboxUid(first) || !isSandboxUid(last)) {
    throw new UserInputError(
      `ACA_SANDBOX_UIDS must be "first-last" within ${SANDBOX_UID_MIN}-${SANDBOX_UID_MIN + SANDBOX_UID_SPAN - 1}, got "${spec}"`,
    );
  }
  return { min: first, span: last - first + 1 };
}

/** Picks a uid of the pool (see sandboxUidPool) that no live process uses, nor any of `avoid`. */
export function pickSandboxUid(avoid: Iterable<number> = []): number {
  const { min, span } = sandboxUidPool();
  const inUse = new Set<number>(avoid);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      inUse.add(fs.statSync(`/proc/${entry}`).uid);
    } catch {
      // Process exited while we looked.
    }
  }
  const free = span > inUse.size ? undefined : freeUids(min, span, inUse);
  if (free?.length === 0) throw new Error(`every sandbox uid of ${min}-${min + span - 1} is in use`);
  for (;;) {
    const uid = free ? free[Math.floor(Math.random() * free.length)] : min + Math.floor(Math.random() * span);
    if (!inUse.has(uid)) return uid;
  }
}

function freeUids(min: number, span: number, inUse: Set<number>): number[] {
  const free: number[] = [];
  for (let uid = min; uid < min + span; uid++) if (!inUse.has(uid)) free.push(uid);
  return free;
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

/** Whether any process of `uid` runs (zombies aside). */
export function hasLiveProcesses(uid: number): boolean {
  return livePidsOf(uid).length > 0;
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
