import { heartbeatIntervalMs } from '../../../src/activities/heartbeats';

describe('how often an activity heartbeats', () => {
  test('its own interval while that is within a third of the heartbeat timeout', () => {
    expect(heartbeatIntervalMs(5_000, 20_000)).toBe(5_000);
    expect(heartbeatIntervalMs(2_000, 30_000)).toBe(2_000);
    expect(heartbeatIntervalMs(5_000, 15_000)).toBe(5_000);
  });

  test('a third of a shorter heartbeat timeout, so one lost beat does not time a live attempt out', () => {
    expect(heartbeatIntervalMs(5_000, 3_000)).toBe(1_000);
    expect(heartbeatIntervalMs(2_000, 4_000)).toBe(1_333);
    expect(heartbeatIntervalMs(10_000, 1_000)).toBe(333);
  });

  test('its own interval when the activity has no heartbeat timeout', () => {
    expect(heartbeatIntervalMs(5_000, undefined)).toBe(5_000);
    expect(heartbeatIntervalMs(5_000, 0)).toBe(5_000);
  });
});
