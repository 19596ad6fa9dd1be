/**
 * Where the machine's CPU went during a stretch of a benchmark: the Temporal dev server, this
 * process (worker, scripted model, bench) and the rest, which is the sandboxed test processes and
 * their helper plus anything else running. Read from /proc, so Linux only; elsewhere the figures
 * are absent rather than guessed.
 */
import * as fs from 'node:fs';

export interface CpuSample {
  atMs: number;
  /** Busy and total time of all cores, ms (from /proc/stat). */
  machineBusyMs: number;
  machineTotalMs: number;
  serverMs: number | null;
  selfMs: number;
}

export interface CpuSplit {
  /** Cores kept busy on average over the stretch (2.0 = both cores of a 2-core machine). */
  busyCores: number;
  /** CPU seconds over the stretch. */
  server: number | null;
  benchProcess: number;
  /** Busy time not accounted to the server or this process: the tests, mostly. */
  testsAndOther: number;
}

/** Clock ticks per second of /proc's figures; 100 on every Linux port Node runs on. */
const TICKS_PER_SECOND = 100;
const tickMs = 1000 / TICKS_PER_SECOND;

function machineTimes(): { busy: number; total: number } | null {
  let text: string;
  try {
    text = fs.readFileSync('/proc/stat', 'utf8');
  } catch {
    return null;
  }
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return null;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: (total - idle) * tickMs, total: total * tickMs };
}

function processCpuMs(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; the fields after its last ')' do not.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    return (Number(fields[11]) + Number(fields[12])) * tickMs;
  } catch {
    return null;
  }
}

export function sampleCpu(serverPid: number | null): CpuSample | null {
  const machine = machineTimes();
  if (!machine) return null;
  const self = process.cpuUsage();
  return {
    atMs: performance.now(),
    machineBusyMs: machine.busy,
    machineTotalMs: machine.total,
    serverMs: serverPid === null ? null : processCpuMs(serverPid),
    selfMs: (self.user + self.system) / 1000,
  };
}

export function cpuSplit(before: CpuSample | null, after: CpuSample | null): CpuSplit | null {
  if (!before || !after || after.atMs <= before.atMs) return null;
  const seconds = (ms: number): number => Math.round(ms) / 1000;
  const busy = after.machineBusyMs - before.machineBusyMs;
  const server =
    before.serverMs === null || after.serverMs === null ? null : after.serverMs - before.serverMs;
  const self = after.selfMs - before.selfMs;
  return {
    busyCores: Math.round((busy / (after.atMs - before.atMs)) * 100) / 100,
    server: server === null ? null : seconds(server),
    benchProcess: seconds(self),
    testsAndOther: seconds(Math.max(0, busy - self - (server ?? 0))),
  };
}
