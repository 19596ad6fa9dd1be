/**
 * A cgroup per sandboxed run, so that memory and processes are limited for all of a run's
 * processes together: RLIMIT_AS is per process, and a test that forks four children of 1 GiB
 * each held 4 GiB under it. Groups are made once and reused, one run at a time each
 * (cgroup-launchers.ts starts a run's processes inside one).
 *
 * cgroup v2 is used when the worker's own group can hold a child with the memory controller;
 * otherwise the v1 memory and pids hierarchies. Creating groups needs root (or a delegated
 * subtree); without either the run goes on with the per-process limits alone, and the worker
 * says so once.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isProcessAlive } from '../../shared/pid-lock';

const ROOT = '/sys/fs/cgroup';

export interface RunCgroup {
  /** Moves a process (and so everything it starts later) into the group. */
  adopt(pid: number): void;
  setLimits(memoryBytes: number, maxProcesses: number): void;
  /** Processes the memory limit killed, when the kernel counts them. */
  oomKills(): number;
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

/** Removes empty groups that workers no longer running left behind in `parent`. */
function sweepStale(parent: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^aca-runs-(\d+)-/.exec(name)?.[1];
    if (!pid || isProcessAlive(Number(pid))) continue;
    try {
      fs.rmdirSync(path.join(parent, name));
    } catch {
      // Still holds a process, or already gone.
    }
  }
}

function v2Group(name: string, memoryBytes: number, maxProcesses: number): RunCgroup | null {
  const own = ownGroup('');
  const controllers = path.join(ROOT, 'cgroup.controllers');
  if (own === null || !fs.existsSync(controllers)) return null;
  sweepStale(path.join(ROOT, own));
  const dir = path.join(ROOT, own, name);
  if (!tryMkdir(dir)) return null;
  if (!write(path.join(dir, 'memory.max'), String(memoryBytes))) {
    fs.rmdirSync(dir);
    return null;
  }
  write(path.join(dir, 'memory.swap.max'), '0');
  write(path.join(dir, 'pids.max'), String(maxProcesses));
  return {
    adopt: (pid) => fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid)),
    setLimits: (memory, processes) => {
      write(path.join(dir, 'memory.max'), String(memory));
      write(path.join(dir, 'pids.max'), String(processes));
    },
    oomKills: () => countOomKills(path.join(dir, 'memory.events')),
  };
}

function v1Group(name: string, memoryBytes: number, maxProcesses: number): RunCgroup | null {
  const memoryOwn = ownGroup('memory');
  if (memoryOwn === null) return null;
  sweepStale(path.join(ROOT, 'memory', memoryOwn));
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
    sweepStale(path.join(ROOT, 'pids', pidsOwn));
    const pidsDir = path.join(ROOT, 'pids', pidsOwn, name);
    if (tryMkdir(pidsDir)) {
      if (write(path.join(pidsDir, 'pids.max'), String(maxProcesses))) dirs.push(pidsDir);
      else fs.rmdirSync(pidsDir);
    }
  }
  return {
    adopt: (pid) => {
      for (const dir of dirs) fs.writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
    },
    setLimits: (memory, processes) => {
      // memsw may never be below the memory limit: written before and after, one of the two
      // writes succeeds whichever way the limit moves. Lowering below what the group holds fails
      // with EBUSY, and the old limit then stays.
      write(path.join(memoryDir, 'memory.memsw.limit_in_bytes'), String(memory));
      write(path.join(memoryDir, 'memory.limit_in_bytes'), String(memory));
      write(path.join(memoryDir, 'memory.memsw.limit_in_bytes'), String(memory));
      if (dirs[1]) write(path.join(dirs[1], 'pids.max'), String(processes));
    },
    oomKills: () => countOomKills(path.join(memoryDir, 'memory.oom_control')),
  };
}

let warned = false;

/** A new group, or null (with one warning per worker) where none can be made. */
export function createRunCgroup(memoryBytes: number, maxProcesses: number): RunCgroup | null {
  const name = `aca-runs-${process.pid}-${randomBytes(4).toString('hex')}`;
  const group = v2Group(name, memoryBytes, maxProcesses) ?? v1Group(name, memoryBytes, maxProcesses);
  if (!group && !warned) {
    warned = true;
    console.warn(
      'aca: no cgroup could be created for sandboxed runs (needs root or a delegated cgroup); memory is limited per process only',
    );
  }
  return group;
}
