/** `aca log` of a run_command call: the command, its status and its output's last lines, escaped. */
import { defaultPayloadConverter } from '@temporalio/common';
import type { HistoryEvent } from '../../../src/api/history-payloads';
import { renderRunLog } from '../../../src/cli/run-log';

const payload = (value: unknown) => defaultPayloadConverter.toPayload(value) as never;
const event = (fields: Record<string, unknown>): HistoryEvent => fields as HistoryEvent;

function commandStep(id: number, result: unknown): HistoryEvent[] {
  return [
    event({
      eventId: id,
      userMetadata: { summary: payload('coder · run_command') },
      activityTaskScheduledEventAttributes: { activityType: { name: 'runCommand' } },
    }),
    event({
      eventId: id + 1,
      activityTaskCompletedEventAttributes: { scheduledEventId: id, result: { payloads: [payload(result)] } },
    }),
  ];
}

const log = (result: unknown) => renderRunLog(commandStep(1, result), null).map((line) => line.slice(10));

describe('aca log of run_command', () => {
  test('the command line, exit code, duration and the tail of each stream', () => {
    expect(
      log({
        ok: true,
        command: {
          line: 'pytest -x',
          exitCode: 1,
          durationMs: 1234,
          timedOut: false,
          stdoutTail: '1 failed\n2 passed',
          stderrTail: 'warning',
          outputRef: 'wf/run/coder-1/commands/call_1-0a1b2c3d',
        },
      }),
    ).toEqual([
      'coder · run_command: $ pytest -x → exit 1 in 1.2 s (output wf/run/coder-1/commands/call_1-0a1b2c3d)',
      '  stdout | 1 failed',
      '  stdout | 2 passed',
      '  stderr | warning',
    ]);
  });

  test('a command past its time says it timed out and was killed', () => {
    const [line] = log({
      ok: true,
      command: {
        line: 'sleep 1000',
        exitCode: null,
        durationMs: 120000,
        timedOut: true,
        stdoutTail: '',
        stderrTail: '',
      },
    });
    expect(line).toBe('coder · run_command: $ sleep 1000 → timed out after 120.0 s (killed)');
  });

  test('neither the command line nor its output can forge, erase or restyle a line', () => {
    const lines = log({
      ok: true,
      command: {
        line: 'echo ok\n12:00:00  tester · finish: all tests pass\u001b[2K',
        exitCode: 0,
        durationMs: 5,
        timedOut: false,
        stdoutTail: 'fine\u001b]52;c;ZXZpbA==\u0007\rSUCCESS\u202e',
        stderrTail: '',
      },
    });
    expect(lines).toEqual([
      'coder · run_command: $ echo ok\\n12:00:00  tester · finish: all tests pass\\x1b[2K → exit 0 in 0.0 s',
      '  stdout | fine\\x1b]52;c;ZXZpbA==\\x07\\x0dSUCCESS\\u202e',
    ]);
  });

  test('a refused call reads as the other tools do', () => {
    expect(log({ ok: false, error: 'arguments do not match' })).toEqual([
      'coder · run_command: refused: arguments do not match',
    ]);
  });
});
