import { Context } from '@temporalio/activity';

/**
 * Heartbeats the current activity every `everyMs` while `work` runs, so Temporal notices a dead
 * worker within the heartbeat timeout. No beat at the start: it would cost every activity one more
 * server round trip, and the timeouts leave room for the first beat after `everyMs`.
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
    everyMs,
  );
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * A heartbeat for events that may come hundreds of times a second (a streamed answer's chunks):
 * beats at most once per `minGapMs`, each with the latest details, since every beat crosses into
 * the SDK's native core.
 */
export function throttledHeartbeat<D>(minGapMs: number): (details: D) => void {
  const ctx = Context.current();
  let last = -Infinity;
  return (details) => {
    const now = performance.now();
    if (now - last < minGapMs) return;
    last = now;
    ctx.heartbeat(details);
  };
}
