/**
 * Jest's node environment, with the sandbox uids of this test process set apart: each test
 * process (Jest worker) of a run picks its runs' uids from a pool of its own (ACA_SANDBOX_UIDS),
 * so that suites running side by side, or another test run on the same machine, never look like
 * leftovers to a suite checking that no process of its runs' uids survives
 * (test/sandbox/host-probes.ts). Set here, outside the test context and before it is made, so
 * that the worker process and everything it starts inherit it.
 */
import NodeEnvironment from 'jest-environment-node';
import { SANDBOX_UID_MIN, SANDBOX_UID_SPAN } from '../../src/sandbox';

type EnvironmentArgs = ConstructorParameters<typeof NodeEnvironment>;

/** Uids per test process; a run's processes take consecutive pools of one block. */
const POOL = 1000;
const POOLS_PER_BLOCK = 16;
const BLOCKS = Math.floor(SANDBOX_UID_SPAN / (POOL * POOLS_PER_BLOCK));

export default class AcaTestEnvironment extends NodeEnvironment {
  constructor(config: EnvironmentArgs[0], context: EnvironmentArgs[1]) {
    process.env.ACA_SANDBOX_UIDS ??= uidPool(process.env.ACA_TEST_UID_BLOCK, process.env.JEST_WORKER_ID);
    super(config, context);
  }
}

function uidPool(blockText: string | undefined, workerText: string | undefined): string {
  // The global setup draws the run's block; a run without it draws one per process.
  const block = Number(blockText ?? Math.floor(Math.random() * BLOCKS)) % BLOCKS;
  const worker = (Number(workerText ?? 1) - 1) % POOLS_PER_BLOCK;
  const first = SANDBOX_UID_MIN + (block * POOLS_PER_BLOCK + worker) * POOL;
  return `${first}-${first + POOL - 1}`;
}
