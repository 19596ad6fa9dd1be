/**
 * Lending the workspace to the sandbox uid and taking it back, for workers that run as root.
 *
 * Both directions run `chown -R -P` (and `chmod -R`) as child processes: a workspace of 300,000
 * files that tests may have created takes seconds to walk, and a walk in the worker would stop
 * its only thread (and the heartbeats of every activity on it) for all of that time. -P changes
 * links themselves and never follows one; the hand-back happens only once no process of the
 * sandbox uid is left, so nothing can move files under the walk.
 *
 * Taking back normalises rather than restores: everything belongs to the workspace's owner again
 * (the worker's own uid if a crashed worker left the workspace to a dead run's uid), and modes lose
 * group and other write and the setuid, setgid and sticky bits, so a 0777 or setuid file a test
 * made does not outlive the run.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
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

export async function lendWorkspaceTo(workspace: string, uid: number): Promise<void> {
  await run('chown', ['-R', '-P', `${uid}:${uid}`, '--', workspace]);
}

export async function takeWorkspaceBack(workspace: string, owner: Owner): Promise<void> {
  await run('chown', ['-R', '-P', `${owner.uid}:${owner.gid}`, '--', workspace]);
  await run('chmod', ['-R', 'go-w,ug-s,-t', '--', workspace]);
}

/** Files (inodes) and apparent bytes under a folder, counted by `du` in a child process. */
export async function workspaceUsage(workspace: string): Promise<{ files: number; bytes: number }> {
  const [inodes, bytes] = await Promise.all([
    exec('du', ['-s', '--inodes', '--', workspace], { env: HOST_TOOL_ENV, timeout: 10 * 60_000 }),
    exec('du', ['-s', '-b', '--apparent-size', '--', workspace], {
      env: HOST_TOOL_ENV,
      timeout: 10 * 60_000,
    }),
  ]);
  return { files: Number(inodes.stdout.split('\t')[0]), bytes: Number(bytes.stdout.split('\t')[0]) };
}
