/**
 * Jest's node environment, with the sandbox uids of this test process set apart: each test
 * process (Jest worker) of a run picks its runs' uids from a pool of its own (ACA_SANDBOX_UIDS),
 * so that suites running side by side, or another test run on the same machine, never look like
 * leftovers to a suite checking that no process of its runs' uids survives
 * (test/helpers/host-probes.ts). Set here, outside the test context and before it is made, so
 * that the worker process and everything it starts inherit it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import NodeEnvironment from 'jest-environment-node';
import { SANDBOX_UID_MIN, SANDBOX_UID_SPAN } from '../../src/sandbox';

type EnvironmentArgs = ConstructorParameters<typeof NodeEnvironment>;

/** Uids per test process; a run's processes take consecutive pools of one block. */
const POOL = 1000;
const POOLS_PER_BLOCK = 16;
const BLOCKS = Math.floor(SANDBOX_UID_SPAN / (POOL * POOLS_PER_BLOCK));

export default class AcaTestEnvironment extends NodeEnvironment {
  private readonly testPath: string;
  private readonly rootDir: string;
  /** Set by the suite-times reporter, which reads what is left there when the run ends. */
  private readonly cpuDir = process.env.ACA_SUITE_CPU_DIR;
  private cpuAtStart: ProcessCpu | null = null;

  constructor(config: EnvironmentArgs[0], context: EnvironmentArgs[1]) {
    process.env.ACA_SANDBOX_UIDS ??= uidPool(process.env.ACA_TEST_UID_BLOCK, process.env.JEST_WORKER_ID);
    super(config, context);
    this.testPath = context.testPath;
    this.rootDir = config.projectConfig.rootDir;
  }

  override async setup(): Promise<void> {
    this.cpuAtStart = processCpu();
    await super.setup();
  }

  /**
   * The suite's CPU time, for the suite-times reporter: this test process's own and that of the
   * processes it started and has reaped (the `aca` commands, workers and servers a suite starts
   * and stops). The shared Temporal server's is nobody's.
   */
  override async teardown(): Promise<void> {
    await super.teardown();
    const end = processCpu();
    if (!this.cpuDir || !this.cpuAtStart || !end) return;
    const file = path.relative(this.rootDir, this.testPath);
    fs.writeFileSync(
      path.join(this.cpuDir, `${file.replace(/[^A-Za-z0-9.-]/g, '_')}.json`),
      JSON.stringify({
        file,
        ownMs: end.ownMs - this.cpuAtStart.ownMs,
        childrenMs: end.childrenMs - this.cpuAtStart.childrenMs,
      }),
    );
  }
}

interface ProcessCpu {
  ownMs: number;
  childrenMs: number;
}

/** CPU time from /proc (Linux): user and system, of this process and of its reaped children. */
function processCpu(): ProcessCpu | null {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    const tickMs = 1000 / CLOCK_TICKS_PER_SECOND;
    return { ownMs: (fields[11] + fields[12]) * tickMs, childrenMs: (fields[13] + fields[14]) * tickMs };
  } catch {
    return null;
  }
}

/** USER_HZ, which Linux fixes at 100 for /proc on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

function uidPool(blockText: string | undefined, workerText: string | undefined): string {
  // The global setup draws the run's block; a run without it draws one per process.
  const block = Number(blockText ?? Math.floor(Math.random() * BLOCKS)) % BLOCKS;
  const worker = (Number(workerText ?? 1) - 1) % POOLS_PER_BLOCK;
  const first = SANDBOX_UID_MIN + (block * POOLS_PER_BLOCK + worker) * POOL;
  return `${first}-${first + POOL - 1}`;
}
