/**
 * Lending the workspace to the sandbox uid, for workers that run as root.
 *
 * A workspace is lent once and stays lent between its test runs: its contents belong to one
 * sandbox uid for as long as this worker serves the run, and each test run only gives that uid
 * what it does not own yet (files the agents wrote, as root, since the last run). Taking all of a
 * 20,000-file repository back after every run and lending it again before the next cost two
 * writing walks over the whole tree per test run, more than the rest of the sandbox together.
 * Between runs no process of the uid is alive (the run kills them all before it ends), so nothing
 * can change the tree while the worker reads it or runs git in it. A walk that may meet a sandbox
 * still running in the tree (the workflow does not wait for a cancelled test run to stop, and a
 * retried attempt may start while the first still runs) kills that sandbox first: a process of
 * the uid swapping a folder for a link while the worker changes owners by path would take the
 * change to whatever host file the link names.
 *
 * The workspace folder itself goes back to its owner after every run: it records who the
 * workspace belongs to, and `releaseWorkspace` (at the end of the run) gives everything back to
 * that owner. After every run, modes lose group and other write and the setuid, setgid and sticky
 * bits, so a 0777 or setuid file a test made does not outlive the run.
 *
 * A small tree is walked in the worker with asynchronous calls (lstat, lchown: links are changed,
 * never followed); past 2,000 entries the work goes to `find` and `du` child processes run side by
 * side, because a workspace of 300,000 files that tests may have created takes seconds to walk,
 * and a synchronous walk stopped the worker's only thread (and the heartbeats of every activity
 * on it) for all of that time. A tree once found large skips the in-process attempt next time.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOST_TOOL_ENV } from '../../shared/executables';
import { runViaHelper } from '../../process';
import {
  hasLiveProcesses,
  isSandboxUid,
  killUidProcesses,
  pickSandboxUid,
  SANDBOX_UID_MIN,
  SANDBOX_UID_SPAN,
} from '../launch/sandbox-user';

/** A host tool run to its end through the spawn helper (no fork of the worker); its stdout. */
async function run(command: string, args: string[]): Promise<string> {
  const result = await runViaHelper({
    command,
    args,
    cwd: '/',
    env: HOST_TOOL_ENV,
    timeoutMs: 10 * 60_000,
    maxOutputBytes: 1024 * 1024,
  });
  if (result.code !== 0 || result.timedOut || result.overflowed) {
    const how = result.timedOut
      ? 'timed out'
      : result.overflowed
        ? 'printed too much'
        : `failed (exit ${String(result.code ?? result.signal)})`;
    throw new Error(
      `${command} ${args.join(' ')} ${how}: ${result.stderr.toString('utf8').trim().slice(-500)}`,
    );
  }
  return result.stdout.toString('utf8');
}

export interface Owner {
  uid: number;
  gid: number;
}

/** Who the workspace goes back to: its owner, unless that is a sandbox uid a crashed run left. */
export function workspaceOwner(workspace: string): Owner {
  const st = fs.lstatSync(workspace);
  if (isSandboxUid(st.uid)) return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  return { uid: st.uid, gid: st.gid };
}

/** Entries a tree may have for the in-process walk; larger trees go to child processes. */
const IN_PROCESS_ENTRIES = 2_000;

/** Workspaces found too large for the in-process walk, oldest first, bounded. */
const knownLarge = new Set<string>();
/** The uid each workspace is lent to while this worker serves its run, oldest first, bounded. */
const lentTo = new Map<string, number>();
const REMEMBERED_WORKSPACES = 1_000;

function remember<K, V>(map: Map<K, V> | Set<K>, key: K, value?: V): void {
  map.delete(key);
  if (map instanceof Map) map.set(key, value as V);
  else map.add(key);
  if (map.size > REMEMBERED_WORKSPACES) map.delete(map.keys().next().value as K);
}

interface Entry {
  path: string;
  stat: fs.Stats;
}

/**
 * Lists a tree without following links, asynchronously (each call runs on libuv's threads, so the
 * worker's thread stays free), giving up past `budget` entries: null then means "large".
 */
async function scanTree(root: string, budget = IN_PROCESS_ENTRIES): Promise<Entry[] | null> {
  if (knownLarge.has(root)) return null;
  const entries: Entry[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const file = stack.pop()!;
    let stat: fs.Stats;
    try {
      stat = await fs.promises.lstat(file);
    } catch {
      continue;
    }
    entries.push({ path: file, stat });
    if (entries.length > budget) {
      remember(knownLarge, root);
      return null;
    }
    if (stat.isDirectory()) {
      const names = await fs.promises.readdir(file).catch(() => [] as string[]);
      for (const name of names) stack.push(path.join(file, name));
    }
  }
  return entries;
}

export interface Usage {
  files: number;
  bytes: number;
}

function usageOf(entries: Entry[]): Usage {
  return { files: entries.length, bytes: entries.reduce((sum, e) => sum + e.stat.size, 0) };
}

/** A workspace lent for one test run: to whom, who gets the folder back, and what it held before. */
export interface Lease {
  uid: number;
  owner: Owner;
  before: Usage;
}

/** The lease of each workspace's test run in progress (or last begun) in this worker. */
const currentLease = new Map<string, Lease>();

/**
 * Kills every process of the sandbox uids that may be running in the workspace: the uid this
 * worker lent it to, and the uid that holds the folder itself (a test run in progress holds it,
 * on this worker or another). Walks that change owners or modes by path come only after this.
 */
async function stopSandboxesIn(workspace: string): Promise<void> {
  const uids = new Set<number>();
  const remembered = lentTo.get(workspace);
  if (remembered !== undefined) uids.add(remembered);
  const holder = fs.lstatSync(workspace).uid;
  if (isSandboxUid(holder)) uids.add(holder);
  for (const uid of uids) await killUidProcesses(uid);
}

/**
 * Lends the workspace to its run's sandbox uid: the uid it was lent to before, unless this worker
 * has not lent it yet or a process of that uid is still alive (then a fresh one, and all of it,
 * once the processes of the old one are dead).
 */
export async function lendWorkspace(given: string): Promise<Lease> {
  // One key per folder, however it was named.
  const workspace = fs.realpathSync(given);
  const owner = workspaceOwner(workspace);
  let uid = lentTo.get(workspace);
  // Not a uid another workspace of this worker is lent to: their sandboxes must stay apart.
  if (uid === undefined || hasLiveProcesses(uid)) uid = pickSandboxUid(lentTo.values());
  await stopSandboxesIn(workspace);
  remember(lentTo, workspace, uid);
  const lease: Lease = { uid, owner, before: { files: 0, bytes: 0 } };
  remember(currentLease, workspace, lease);
  const entries = await scanTree(workspace);
  if (entries === null) {
    const [, before] = await Promise.all([
      run('find', [
        '-P',
        workspace,
        '!',
        '-uid',
        String(uid),
        '-exec',
        'chown',
        '-h',
        `${uid}:${uid}`,
        '--',
        '{}',
        '+',
      ]),
      usageByDu(workspace),
    ]);
    lease.before = before;
    return lease;
  }
  for (const { path: file, stat } of entries) {
    if (stat.uid !== uid || stat.gid !== uid) await fs.promises.lchown(file, uid, uid).catch(() => undefined);
  }
  lease.before = usageOf(entries);
  return lease;
}

/**
 * The first lend, as the run's work tree is made (no test runs yet): the contents are lent, the
 * folder itself stays its owner's, so that it still says whom the workspace goes back to.
 */
export async function lendWorkspaceContents(given: string): Promise<void> {
  const workspace = fs.realpathSync(given);
  const lease = await lendWorkspace(workspace);
  currentLease.delete(workspace);
  await fs.promises.lchown(workspace, lease.owner.uid, lease.owner.gid);
}

/**
 * Ends a test run's lease, once no process of its uid is left: strips the modes a test may have
 * set, gives the folder itself back to its owner, and says what the workspace holds now.
 */
export async function endLease(workspace: string, lease: Lease): Promise<Usage> {
  // A later lease (a retried attempt that started while this one still ran) is in charge now: its
  // sandbox may be running, so this one must neither walk the tree changing modes nor take the
  // folder back. The later lease's own end does both.
  if (currentLease.get(workspace) !== lease) return workspaceUsage(workspace);
  currentLease.delete(workspace);
  const entries = await scanTree(workspace);
  let after: Usage;
  if (entries === null) {
    const [, usage] = await Promise.all([
      run('find', [
        '-P',
        workspace,
        '!',
        '-type',
        'l',
        '-perm',
        '/7022',
        '-exec',
        'chmod',
        'go-w,ug-s,-t',
        '--',
        '{}',
        '+',
      ]),
      usageByDu(workspace),
    ]);
    after = usage;
  } else {
    for (const { path: file, stat } of entries) {
      // Links have no mode of their own; chmod would follow them.
      if (!stat.isSymbolicLink() && (stat.mode & 0o7022) !== 0) {
        await fs.promises.chmod(file, stat.mode & 0o7777 & ~0o7022).catch(() => undefined);
      }
    }
    after = usageOf(entries);
  }
  await fs.promises.lchown(workspace, lease.owner.uid, lease.owner.gid);
  return after;
}

/**
 * Gives every entry a sandbox uid owns back to the workspace's owner: at the end of a run, or for
 * a workspace a crashed worker left lent. Entries of other owners are left as they are.
 */
export async function releaseWorkspace(given: string): Promise<void> {
  const workspace = fs.realpathSync(given);
  const owner = workspaceOwner(workspace);
  await stopSandboxesIn(workspace);
  lentTo.delete(workspace);
  const entries = await scanTree(workspace);
  if (entries === null) {
    // find's -uid +N / -N are "greater than" and "less than".
    await run('find', [
      '-P',
      workspace,
      '-uid',
      `+${SANDBOX_UID_MIN - 1}`,
      '-uid',
      `-${SANDBOX_UID_MIN + SANDBOX_UID_SPAN}`,
      '-exec',
      'chown',
      '-h',
      `${owner.uid}:${owner.gid}`,
      '--',
      '{}',
      '+',
    ]);
  } else {
    for (const { path: file, stat } of entries) {
      if (isSandboxUid(stat.uid) || isSandboxUid(stat.gid)) {
        await fs.promises.lchown(file, owner.uid, owner.gid).catch(() => undefined);
      }
    }
  }
  await fs.promises.lchown(workspace, owner.uid, owner.gid);
}

/** Files (inodes, folders included) and apparent bytes under a folder. */
export async function workspaceUsage(workspace: string): Promise<Usage> {
  const entries = await scanTree(workspace);
  return entries === null ? usageByDu(workspace) : usageOf(entries);
}

async function usageByDu(workspace: string): Promise<Usage> {
  const [inodes, bytes] = await Promise.all([
    run('du', ['-s', '--inodes', '--', workspace]),
    run('du', ['-s', '-b', '--apparent-size', '--', workspace]),
  ]);
  return { files: Number(inodes.split('\t')[0]), bytes: Number(bytes.split('\t')[0]) };
}
