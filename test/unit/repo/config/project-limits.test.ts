import { sandboxLimitsOf } from '../../../../src/activities/test-activities';
import { checkProjectLimits, clampProjectLimits, parseProjectConfig } from '../../../../src/repo';
import { DEFAULT_SANDBOX_LIMITS, resolveLimits } from '../../../../src/sandbox';
import { DEFAULT_LIMIT_MAXIMUMS } from '../../../../src/shared/limit-maximums';
import { UserInputError } from '../../../../src/shared/errors';

const MiB = 1024 * 1024;
const greedy = '{"limits": {"memoryMiB": 1048576, "wallTimeSeconds": 86400, "cpuSeconds": 86400}}';

describe('.aca.json limits within the maximums', () => {
  test('a limit above a maximum is refused with one line naming it, the maximum and its setting', () => {
    const config = parseProjectConfig(greedy, '/repo/.aca.json');
    const error = (() => {
      try {
        checkProjectLimits(config.limits, DEFAULT_LIMIT_MAXIMUMS, '/repo/.aca.json');
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(UserInputError);
    expect((error as Error).message).toBe(
      '/repo/.aca.json: limits.wallTimeSeconds is 86400, above the most a run may have (1800, set by ACA_MAX_WALL_SECONDS)',
    );
    expect(() =>
      checkProjectLimits({ memoryMiB: 8192 }, { ...DEFAULT_LIMIT_MAXIMUMS, memoryMiB: 4096 }, 'x'),
    ).toThrow(/limits\.memoryMiB is 8192, above the most a run may have \(4096, set by ACA_MAX_MEMORY_MIB\)/);
    expect(() =>
      checkProjectLimits(
        { memoryMiB: 4096, wallTimeSeconds: 1800, cpuSeconds: 1800 },
        DEFAULT_LIMIT_MAXIMUMS,
        'x',
      ),
    ).not.toThrow();
  });

  test('a worker holds what reaches it to its maximums: 1 TiB and a day become what it allows', () => {
    const { limits } = parseProjectConfig(greedy, 'base commit');
    expect(clampProjectLimits(limits, DEFAULT_LIMIT_MAXIMUMS)).toEqual({
      limits: { memoryMiB: 4096, wallTimeSeconds: 1800, cpuSeconds: 1800 },
      lowered: [
        'limits.wallTimeSeconds 86400 -> 1800',
        'limits.cpuSeconds 86400 -> 1800',
        'limits.memoryMiB 1048576 -> 4096',
      ],
    });
    const sandbox = resolveLimits(sandboxLimitsOf(limits));
    expect(sandbox).toMatchObject({
      wallTimeoutMs: 1_800_000,
      cpuSeconds: 1800,
      // Also the size of the sandbox's /tmp.
      memoryBytes: 4096 * MiB,
      runMemoryBytes: 8192 * MiB,
    });
  });

  test("a worker with lower maximums holds aca's defaults to them too; within them nothing changes", () => {
    const small = { wallSeconds: 60, cpuSeconds: 30, memoryMiB: 512 };
    expect(resolveLimits(sandboxLimitsOf(undefined, small))).toMatchObject({
      wallTimeoutMs: 60_000,
      cpuSeconds: 30,
      memoryBytes: 512 * MiB,
      runMemoryBytes: DEFAULT_SANDBOX_LIMITS.runMemoryBytes,
    });
    expect(resolveLimits(sandboxLimitsOf({ memoryMiB: 2048, wallTimeSeconds: 300 }))).toMatchObject({
      wallTimeoutMs: 300_000,
      cpuSeconds: DEFAULT_SANDBOX_LIMITS.cpuSeconds,
      memoryBytes: 2048 * MiB,
      runMemoryBytes: 4096 * MiB,
    });
  });
});
