/**
 * Memory limits that let ordinary suites run: where the run gets a cgroup (a root worker on a
 * cgroup v2 or v1 system) memory is bounded there, for all of the run's processes together, and
 * no per-process address-space limit is set, since that one counts reserved memory and breaks
 * threads long before memory runs out. Without a cgroup the address-space limit is the bound.
 */
import { isRoot, resolveLimits, runTestSuite, withRlimits } from '../../../src/sandbox';
import { makeWorkspace, removeWorkspaces } from '../../helpers/workspace-fixture';
import { THREAD_SUITE } from '../../helpers/thread-suite';

// Only a root worker makes a cgroup per run; elsewhere the address-space limit applies (below).
const rootOnly = isRoot() ? test : test.skip;

describe('memory limits of a test run', () => {
  afterAll(removeWorkspaces);

  rootOnly(
    'a suite of 64 threads, each allocating, passes with the default limits',
    async () => {
      const workspace = makeWorkspace({
        'test_threads.py': THREAD_SUITE,
      });
      const report = await runTestSuite({ workspace, language: 'python', mode: 'bwrap' });
      expect([report.outcome, report.passed, report.failed, report.errors]).toEqual(['completed', 1, 0, 0]);
    },
    120_000,
  );

  rootOnly(
    'a suite over the run memory is stopped by the kernel, and the report names the limit',
    async () => {
      const workspace = makeWorkspace({
        'test_hog.py': [
          'def test_hog():',
          '    blocks = []',
          '    for _ in range(64):',
          '        blocks.append(bytearray(16 * 1024 * 1024))',
          '    assert len(blocks) == 64',
          '',
        ].join('\n'),
      });
      const MiB = 1024 * 1024;
      const report = await runTestSuite({
        workspace,
        language: 'python',
        mode: 'bwrap',
        limits: { memoryBytes: 256 * MiB, runMemoryBytes: 300 * MiB },
      });
      expect(report.passed).toBe(0);
      expect(report.message).toMatch(
        /^the run's memory limit of 300 MiB was hit: the kernel killed \d+ of its processes/,
      );
    },
    120_000,
  );

  test('the address-space limit is set only where no cgroup bounds the memory', () => {
    const limits = resolveLimits({});
    const script = (memoryInCgroup: boolean) =>
      withRlimits(['python3'], limits, {
        limitProcesses: true,
        addressSpaceHeadroomBytes: 0,
        memoryInCgroup,
      })[2]!;
    expect(script(false)).toContain(`ulimit -v ${limits.memoryBytes / 1024}`);
    expect(script(true)).not.toContain('ulimit -v');
    expect(script(true)).toContain(`ulimit -t ${limits.cpuSeconds}`);
    expect(script(true)).toContain(`ulimit -u ${limits.maxProcesses}`);
  });
});
