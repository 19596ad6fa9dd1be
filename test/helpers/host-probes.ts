import * as fs from 'node:fs';
import * as net from 'node:net';
import { sandboxUidPool } from '../../src/sandbox';

/**
 * Live host pids running as one of the sandbox uids this test process gives its runs (its pool,
 * see test/helpers/node-environment.ts; the whole range where no pool is set). Zombies are
 * left out: bwrap's outer process exits before reaping the namespace's init, so
 * that init is briefly (or, under a container init that never reaps, forever)
 * a zombie of the host's pid 1. A zombie runs nothing and holds no memory.
 */
export function sandboxUidPids(opts: { includeZombies?: boolean } = {}): number[] {
  const { min, span } = sandboxUidPool();
  const ours = (uid: number) => uid >= min && uid < min + span;
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!ours(fs.statSync(`/proc/${entry}`).uid)) continue;
      if (!opts.includeZombies && isZombie(entry)) continue;
      pids.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return pids;
}

function isZombie(pid: string): boolean {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The state follows the parenthesised command name, which may itself contain spaces or parentheses.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
}

/** Host pids whose command line contains `marker` (optionally only those whose command name is `comm`). */
export function pidsWithMarker(marker: string, comm?: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (comm !== undefined && fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== comm) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return pids;
}

export function canConnect(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Listens on `port` unless something already does, so "unreachable from the sandbox" is meaningful. */
export async function ensureListening(port: number): Promise<net.Server | undefined> {
  if (await canConnect(port)) return undefined;
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end('host service\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return server;
}

export async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return predicate();
}
