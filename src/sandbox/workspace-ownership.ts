/**
 * Lending the workspace to the sandbox uid and taking it back, for workers that run as root.
 *
 * A small tree is walked in the worker with asynchronous calls (lstat, lchown: links are changed,
 * never followed); past 2,000 entries the work goes to `chown -R -P` and `chmod -R` child
 * processes, because a workspace of 300,000 files that tests may have created takes seconds to
 * walk, and a synchronous walk stopped the worker's only thread (and the heartbeats of every
 * activity on it) for all of that time. The hand-back happens only once no process of the
 * sandbox uid is left, so nothing can move files under the walk.
 *
 * Taking back normalises rather than restores: everything belongs to the workspace's owner again
 * (the worker's own uid if a crashed worker left the workspace to a dead run's uid), and modes lose
 * group and other write and the setuid, setgid and sticky bits, so a 0777 or setuid file a test
 * made does not outlive the run.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { HOST_TOOL_ENV } from './availability';
import { isSandboxUid } from './sandbox-user';

const exec = promisify(execFile);

async function run(command: string, args: string[]): Promise<void> {
  await exec(command, args, { env: HOST_TOOL_ENV, maxBuffer: 1024 * 1024, timeout: 10 * 60_000 });
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

interface Entry {
  path: string;
  stat: fs.Stats;
}

/**
 * Lists a tree without following links, asynchronously (each call runs on libuv's threads, so the
 * worker's thread stays free), giving up past `budget` entries: null then means "large".
 */
async function scanTree(root: string, budget = IN_PROCESS_ENTRIES): Promise<Entry[] | null> {
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
    if (entries.length > budget) return null;
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

export async function lendWorkspaceTo(workspace: string, uid: number): Promise<void> {
  const entries = await scanTree(workspace);
  if (entries === null) {
    await run('chown', ['-R', '-P', `${uid}:${uid}`, '--', workspace]);
    return;
  }
  for (const entry of entries) await fs.promises.lchown(entry.path, uid, uid).catch(() => undefined);
}

/** Gives the workspace back and says what it holds now (a pass over it either way). */
export async function takeWorkspaceBack(workspace: string, owner: Owner): Promise<Usage> {
  const entries = await scanTree(workspace);
  if (entries === null) {
    await run('chown', ['-R', '-P', `${owner.uid}:${owner.gid}`, '--', workspace]);
    await run('chmod', ['-R', 'go-w,ug-s,-t', '--', workspace]);
    return workspaceUsage(workspace);
  }
  for (const { path: file, stat } of entries) {
    if (stat.uid !== owner.uid || stat.gid !== owner.gid) {
      await fs.promises.lchown(file, owner.uid, owner.gid).catch(() => undefined);
    }
    // Links have no mode of their own; chmod would follow them.
    if (!stat.isSymbolicLink() && (stat.mode & 0o7022) !== 0) {
      await fs.promises.chmod(file, stat.mode & 0o7777 & ~0o7022).catch(() => undefined);
    }
  }
  return usageOf(entries);
}

/** Files (inodes, folders included) and apparent bytes under a folder. */
export async function workspaceUsage(workspace: string): Promise<Usage> {
  const entries = await scanTree(workspace);
  if (entries !== null) return usageOf(entries);
  const [inodes, bytes] = await Promise.all([
    exec('du', ['-s', '--inodes', '--', workspace], { env: HOST_TOOL_ENV, timeout: 10 * 60_000 }),
    exec('du', ['-s', '-b', '--apparent-size', '--', workspace], {
      env: HOST_TOOL_ENV,
      timeout: 10 * 60_000,
    }),
  ]);
  return { files: Number(inodes.stdout.split('\t')[0]), bytes: Number(bytes.stdout.split('\t')[0]) };
}
