import { Context } from '@temporalio/activity';
import { DEFAULT_HEARTBEAT_EVERY_MS } from '../sandbox';

/**
 * How often to beat: `preferredMs`, or a third of the activity's heartbeat timeout when that is
 * shorter (a worker can set a short one, ACA_HEARTBEAT_TIMEOUT), so that one late or lost beat
 * does not time the attempt out while the worker is alive.
 */
export function heartbeatIntervalMs(preferredMs: number, heartbeatTimeoutMs: number | undefined): number {
  if (!heartbeatTimeoutMs || heartbeatTimeoutMs <= 0) return preferredMs;
  return Math.min(preferredMs, Math.floor(heartbeatTimeoutMs / 3));
}

/** runTestSuite's heartbeat options for the current activity: its beat, and how often to send it. */
export function sandboxHeartbeat(): { heartbeat: () => void; heartbeatEveryMs: number } {
  const ctx = Context.current();
  return {
    heartbeat: () => ctx.heartbeat(),
    heartbeatEveryMs: heartbeatIntervalMs(DEFAULT_HEARTBEAT_EVERY_MS, ctx.info.heartbeatTimeoutMs),
  };
}

/**
 * Heartbeats the current activity every `everyMs` (at most; see heartbeatIntervalMs) while `work`
 * runs, so Temporal notices a dead worker within the heartbeat timeout. No beat at the start: it
 * would cost every activity one more server round trip, and the timeouts leave room for the first
 * beat after the interval.
 */
export async function withHeartbeats<T>(
  everyMs: number,
  work: () => Promise<T>,
  /** Sent with every beat; a function is asked each time, for details that change as work goes on. */
  details?: unknown,
): Promise<T> {
  const ctx = Context.current();
  const timer = setInterval(
    () => ctx.heartbeat(typeof details === 'function' ? (details as () => unknown)() : details),
    heartbeatIntervalMs(everyMs, ctx.info.heartbeatTimeoutMs),
  );
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * A heartbeat for events that may come hundreds of times a second (a streamed answer's chunks):
 * beats at most once per `minGapMs` (or per heartbeatIntervalMs, when that is shorter), each with
 * the latest details, since every beat crosses into the SDK's native core.
 */
export function throttledHeartbeat<D>(minGapMs: number): (details: D) => void {
  const ctx = Context.current();
  const gapMs = heartbeatIntervalMs(minGapMs, ctx.info.heartbeatTimeoutMs);
  let last = -Infinity;
  return (details) => {
    const now = performance.now();
    if (now - last < gapMs) return;
    last = now;
    ctx.heartbeat(details);
  };
}
