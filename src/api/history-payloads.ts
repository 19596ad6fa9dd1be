import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payload = temporal.api.common.v1.IPayload;

/** A payload of a run's history as a value; undefined when it is absent or cannot be read. */
export function decodePayload(payload: Payload | null | undefined): unknown {
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(
      payload as Parameters<typeof defaultPayloadConverter.fromPayload>[0],
    );
  } catch {
    return undefined;
  }
}

/** Each completed activity of a history: its type, its first argument and its result. */
export function completedActivities(
  events: HistoryEvent[],
): Array<{ type: string; input: unknown; result: unknown }> {
  const scheduled = new Map<string, { type: string; input: unknown }>();
  const done: Array<{ type: string; input: unknown; result: unknown }> = [];
  for (const event of events) {
    const attrs = event.activityTaskScheduledEventAttributes;
    if (attrs) {
      scheduled.set(String(event.eventId), {
        type: attrs.activityType?.name ?? '?',
        input: decodePayload(attrs.input?.payloads?.[0]),
      });
      continue;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (!completed) continue;
    const step = scheduled.get(String(completed.scheduledEventId));
    if (step) done.push({ ...step, result: decodePayload(completed.result?.payloads?.[0]) });
  }
  return done;
}
