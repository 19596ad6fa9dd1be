/**
 * `aca log` reads tool calls from both kinds of step: local activities (markers) where the
 * workflow's worker had the run's files, and the host queue's activities where it had not.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { HistoryEvent } from '../../../src/api/history-payloads';
import { renderRunLog } from '../../../src/cli/run-log';

const payload = (value: unknown) => defaultPayloadConverter.toPayload(value) as never;
let nextId = 1;
/** History events as the client reads them; only the fields renderRunLog looks at. */
const event = (fields: Record<string, unknown>): HistoryEvent => fields as HistoryEvent;

function localToolCall(
  summary: string,
  result: unknown,
  failure?: string,
  type = 'toolCallHere',
): HistoryEvent {
  return event({
    eventId: nextId++,
    userMetadata: { summary: payload(summary) },
    markerRecordedEventAttributes: {
      markerName: 'core_local_activity',
      details: {
        data: { payloads: [payload({ activity_type: type })] },
        ...(failure ? {} : { result: { payloads: [payload(result)] } }),
      },
      ...(failure ? { failure: { message: failure } } : {}),
    },
  });
}

function hostToolCall(summary: string, type: string, result: unknown): HistoryEvent[] {
  const scheduled = nextId++;
  return [
    event({
      eventId: scheduled,
      userMetadata: { summary: payload(summary) },
      activityTaskScheduledEventAttributes: { activityType: { name: type } },
    }),
    event({
      eventId: nextId++,
      activityTaskCompletedEventAttributes: {
        scheduledEventId: scheduled,
        result: { payloads: [payload(result)] },
      },
    }),
  ];
}

describe('aca log of tool calls', () => {
  test('a call taken where the workflow ran reads as the call, with its answer', () => {
    const lines = renderRunLog(
      [
        localToolCall('coder · create_file a.py', { here: true, outcome: { ok: true } }),
        localToolCall('coder · read_file \u001b[2Jb.py', {
          here: true,
          outcome: { ok: false, error: 'no such file' },
        }),
      ],
      null,
    ).map((line) => line.slice(10));
    expect(lines).toEqual([
      'coder · create_file a.py: ok',
      'coder · read_file \\x1b[2Jb.py: refused: no such file',
    ]);
  });

  test('a call refused there shows once, from the host queue that took it', () => {
    const lines = renderRunLog(
      [
        localToolCall('coder · create_file a.py', {
          here: false,
          why: "the run's files are on another host",
        }),
        ...hostToolCall('coder · create_file a.py', 'create_file', { ok: true }),
      ],
      null,
    ).map((line) => line.slice(10));
    expect(lines).toEqual(['coder · create_file a.py: ok']);
  });

  test('a local call that failed says so', () => {
    const lines = renderRunLog([localToolCall('coder · list_files .', undefined, 'disk full')], null);
    expect(lines.map((line) => line.slice(10))).toEqual(['coder · list_files .: failed: disk full']);
  });

  test('a turn opened where the workflow ran shows once; one refused there shows from the host queue', () => {
    const opened = { commit: 'c1', ref: 'wf/run/coder-1' };
    const lines = renderRunLog(
      [
        localToolCall('coder · open the turn', { here: true, outcome: opened }, undefined, 'openTurnHere'),
        localToolCall(
          'tester · open the turn',
          { here: false, why: 'the work tree is large' },
          undefined,
          'openTurnHere',
        ),
        ...hostToolCall('tester · open the turn', 'openTurn', opened),
      ],
      null,
    ).map((line) => line.slice(10));
    expect(lines).toEqual(['coder · open the turn: done', 'tester · open the turn: done']);
  });
});
