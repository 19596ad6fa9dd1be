/**
 * `aca log` reads each step of the run from its activity events: a tool call with its answer, a
 * turn's opening and a turn's commit, each a step of its own on the host's queue.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { HistoryEvent } from '../../../src/api/history-payloads';
import { renderRunLog } from '../../../src/cli/run-log';

const payload = (value: unknown) => defaultPayloadConverter.toPayload(value) as never;
let nextId = 1;
/** History events as the client reads them; only the fields renderRunLog looks at. */
const event = (fields: Record<string, unknown>): HistoryEvent => fields as HistoryEvent;

function hostStep(summary: string, type: string, result: unknown, failure?: string): HistoryEvent[] {
  const scheduled = nextId++;
  return [
    event({
      eventId: scheduled,
      userMetadata: { summary: payload(summary) },
      activityTaskScheduledEventAttributes: { activityType: { name: type } },
    }),
    failure
      ? event({
          eventId: nextId++,
          activityTaskFailedEventAttributes: { scheduledEventId: scheduled, failure: { message: failure } },
        })
      : event({
          eventId: nextId++,
          activityTaskCompletedEventAttributes: {
            scheduledEventId: scheduled,
            result: { payloads: [payload(result)] },
          },
        }),
  ];
}

describe('aca log of the steps on the host', () => {
  test('a tool call reads as the call, with its answer; what the model wrote is escaped', () => {
    const lines = renderRunLog(
      [
        ...hostStep('coder · create_file a.py', 'create_file', { ok: true }),
        ...hostStep('coder · read_file \u001b[2Jb.py', 'read_file', { ok: false, error: 'no such file' }),
      ],
      null,
    ).map((line) => line.slice(10));
    expect(lines).toEqual([
      'coder · create_file a.py: ok',
      'coder · read_file \\x1b[2Jb.py: refused: no such file',
    ]);
  });

  test('a call that failed says so', () => {
    const lines = renderRunLog(hostStep('coder · list_files .', 'list_files', undefined, 'disk full'), null);
    expect(lines.map((line) => line.slice(10))).toEqual(['coder · list_files .: failed: disk full']);
  });

  test("a turn's opening and its commit each show once, the commit by its id", () => {
    const commit = 'a'.repeat(40);
    const lines = renderRunLog(
      [
        ...hostStep('coder · open the turn', 'openTurn', { ref: 'wf/run/coder-1' }),
        ...hostStep('git · commit coder turn of attempt 1', 'commitTurn', commit),
        ...hostStep('git · commit tester turn of attempt 1', 'commitTurn', null),
      ],
      null,
    ).map((line) => line.slice(10));
    expect(lines).toEqual([
      'coder · open the turn: done',
      `git · commit coder turn of attempt 1: commit ${'a'.repeat(12)}`,
      'git · commit tester turn of attempt 1: nothing changed',
    ]);
  });

  test("a turn's opening names the instruction files its first message carries, names escaped", () => {
    const lines = renderRunLog(
      [
        ...hostStep('planner · open the turn', 'openTurn', {
          ref: 'wf/run/planner',
          instructions: ['AGENTS.md', 'src/\u001b[2Jx/AGENTS.md', '--instructions'],
        }),
      ],
      null,
    ).map((line) => line.slice(10));
    expect(lines).toEqual([
      'planner · open the turn: instructions from AGENTS.md, "src/\\x1b[2Jx/AGENTS.md", --instructions',
    ]);
  });
});
