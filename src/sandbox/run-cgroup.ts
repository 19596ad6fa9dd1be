/**
 * A cgroup per sandboxed run, so that memory and processes are limited for all of a run's
 * processes together: RLIMIT_AS is per process, and a test that forks four children of 1 GiB
 * each held 4 GiB under it. The run's first process writes itself into the group before it execs
 * anything (bwrap-launch.ts), so every process of the run is inside from the start.
 *
 * cgroup v2 is used when the worker's own group can hold a child with the memory controller;
 * otherwise the v1 memory and pids hierarchies. Creating groups needs root (or a delegated
 * subtree); without either the run goes on with the per-process limits alone, and the worker
 * says so once.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = '/sys/fs/cgroup';

export interface RunCgroup {
  /** The `cgroup.procs` files the run's first process writes its pid to. */
  procsFiles: string[];
  /** Processes the memory limit killed, when the kernel counts them. */
  oomKills(): number;
  remove(): void;
}

/** The worker's own group in a hierarchy, from /proc/self/cgroup (`id:controllers:/path`). */
function ownGroup(controller: string | ''): string | null {
  let text: string;
  try {
    text = fs.readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const [, controllers, group] = line.split(':');
    if (group === undefined) continue;
    if (controller === '' ? controllers === '' : controllers.split(',').includes(controller)) return group;
  }
  return null;
}

function tryMkdir(dir: string): boolean {
  try {
    fs.mkdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

function write(file: string, value: string): boolean {
  try {
    fs.writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

function countOomKills(eventsFile: string): number {
  try {
    const match = /^oom_kill (\d+)$/m.exec(fs.readFileSync(eventsFile, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

function v2Group(name: string, memoryBytes: number, maxProcesses: number): RunCgroup | null {
  const own = ownGroup('');
  const controllers = path.join(ROOT, 'cgroup.controllers');
  if (own === null || !fs.existsSync(controllers)) return null;
  const dir = path.join(ROOT, own, name);
  if (!tryMkdir(dir)) return null;
  if (!write(path.join(dir, 'memory.max'), String(memoryBytes))) {
    fs.rmdirSync(dir);
    return null;
  }
  write(path.join(dir, 'memory.swap.max'), '0');
  write(path.join(dir, 'pids.max'), String(maxProcesses));
  return {
    procsFiles: [path.join(dir, 'cgroup.procs')],
    oomKills: () => countOomKills(path.join(dir, 'memory.events')),
    remove: () => {
      try {
        fs.rmdirSync(dir);
      } catch {
        // A process of the run is still leaving; the kernel frees the group when it is empty.
      }
    },
  };
}

function v1Group(name: string, memoryBytes: number, maxProcesses: number): RunCgroup | null {
  const memoryOwn = ownGroup('memory');
  if (memoryOwn === null) return null;
  const memoryDir = path.join(ROOT, 'memory', memoryOwn, name);
  if (!tryMkdir(memoryDir)) return null;
  if (!write(path.join(memoryDir, 'memory.limit_in_bytes'), String(memoryBytes))) {
    fs.rmdirSync(memoryDir);
    return null;
  }
  // With swap accounting on, the same bound for memory and swap together.
  write(path.join(memoryDir, 'memory.memsw.limit_in_bytes'), String(memoryBytes));
  const dirs = [memoryDir];
  const pidsOwn = ownGroup('pids');
  if (pidsOwn !== null) {
    const pidsDir = path.join(ROOT, 'pids', pidsOwn, name);
    if (tryMkdir(pidsDir)) {
      if (write(path.join(pidsDir, 'pids.max'), String(maxProcesses))) dirs.push(pidsDir);
      else fs.rmdirSync(pidsDir);
    }
  }
  return {
    procsFiles: dirs.map((dir) => path.join(dir, 'cgroup.procs')),
    oomKills: () => countOomKills(path.join(memoryDir, 'memory.oom_control')),
    remove: () => {
      for (const dir of dirs) {
        try {
          fs.rmdirSync(dir);
        } catch {
          // A process of the run is still leaving; the group goes with the next clean-up.
        }
      }
    },
  };
}

let warned = false;

/** A group for one run, or null (with one warning per worker) where none can be made. */
export function createRunCgroup(memoryBytes: number, maxProcesses: number): RunCgroup | null {
  const name = `aca-run-${randomBytes(6).toString('hex')}`;
  const group = v2Group(name, memoryBytes, maxProcesses) ?? v1Group(name, memoryBytes, maxProcesses);
  if (!group && !warned) {
    warned = true;
    console.warn(
      'aca: no cgroup could be created for sandboxed runs (needs root or a delegated cgroup); memory is limited per process only',
    );
  }
  return group;
}
