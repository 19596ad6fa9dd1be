/**
 * Starting a run's processes inside its cgroup without moving a process into it per run.
 *
 * Writing a pid to `cgroup.procs` waits for the kernel to quiesce every cgroup operation (an RCU
 * grace period): about 10 ms here, for each run, in front of the first test process. Processes
 * forked by a process already in a group are born there at no cost, so each group gets a spawn
 * helper of its own, moved in once; a run borrows a free (helper, group) pair for its duration,
 * and the pairs are reused. The helper, a small Node process, counts against the group's memory.
 */
import { createRunCgroup, type RunCgroup } from './run-cgroup';
import { SpawnHelper, type SpawnedProcess, type SpawnRequest } from '../../process';

export interface CgroupLauncher {
  spawn(request: SpawnRequest): Promise<SpawnedProcess>;
  /** Processes the group's memory limit has killed since the group was made. */
  oomKills(): number;
  release(): void;
}

interface Member {
  cgroup: RunCgroup;
  helper: SpawnHelper;
}

const free: Member[] = [];
/** The helper process and the sandbox's launch chain, beside the run's own processes. */
const HELPER_PROCESSES = 8;

/** A launcher whose processes are born in a group with these limits, or null where none can be made. */
export function acquireCgroupLauncher(memoryBytes: number, maxProcesses: number): CgroupLauncher | null {
  let member = free.pop();
  if (member) {
    member.cgroup.setLimits(memoryBytes, maxProcesses + HELPER_PROCESSES);
  } else {
    const cgroup = createRunCgroup(memoryBytes, maxProcesses + HELPER_PROCESSES);
    if (!cgroup) return null;
    member = { cgroup, helper: new SpawnHelper((pid) => cgroup.adopt(pid)) };
  }
  const taken = member;
  const oomAtStart = taken.cgroup.oomKills();
  let released = false;
  return {
    spawn: (request) => taken.helper.spawn(request),
    oomKills: () => taken.cgroup.oomKills() - oomAtStart,
    release: () => {
      if (released) return;
      released = true;
      free.push(taken);
    },
  };
}
