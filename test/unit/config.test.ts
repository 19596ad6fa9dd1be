import { loadConfig } from '../../src/config';
import { UserInputError } from '../../src/shared/errors';

describe('configuration from the environment', () => {
  test('test slots default to the CPU count, at least 2', () => {
    expect(loadConfig({}, { cpuCount: 8 }).testSlots).toBe(8);
    expect(loadConfig({}, { cpuCount: 1 }).testSlots).toBe(2);
    expect(loadConfig({ ACA_TEST_SLOTS: '3' }, { cpuCount: 8 }).testSlots).toBe(3);
  });

  test('ACA_TEST_SLOTS sets the sandboxed test runs a worker runs at once', () => {
    expect(loadConfig({ ACA_TEST_SLOTS: '6' }).testSlots).toBe(6);
  });

  test.each(['0', '-1', '2.5', 'four', '1000'])(
    'ACA_TEST_SLOTS=%s is refused with a clear message',
    (value) => {
      expect(() => loadConfig({ ACA_TEST_SLOTS: value })).toThrow(UserInputError);
      expect(() => loadConfig({ ACA_TEST_SLOTS: value })).toThrow(
        /ACA_TEST_SLOTS must be a whole number from 1 to 256/,
      );
    },
  );

  test('a bad sandbox mode or metrics port is refused', () => {
    expect(() => loadConfig({ ACA_SANDBOX: 'docker' })).toThrow(/ACA_SANDBOX must be "bwrap" or "none"/);
    expect(() => loadConfig({ ACA_METRICS_PORT: '70000' })).toThrow(/ACA_METRICS_PORT must be a port number/);
  });
});
