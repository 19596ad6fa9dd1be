/**
 * Reads a finished run's Temporal history (following continue-as-new) and says
 * how big it is, how it grows per iteration, and where the run's time went
 * according to the server's own event times.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { decodePayload } from '../src/api/history-payloads';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type HistoryEvent = NonNullable<History['events']>[number];
type Timestamp = HistoryEvent['eventTime'];

export interface Execution {
  runId: string;
  events: HistoryEvent[];
  /** Server-reported history size in bytes (DescribeWorkflowExecution). */
  bytes: number;
}

export async function fetchExecutions(
  client: Client,
  workflowId: string,
  firstRunId: string,
): Promise<Execution[]> {
  const executions: Execution[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const handle: WorkflowHandle = client.workflow.getHandle(workflowId, runId);
    const [history, description] = await Promise.all([handle.fetchHistory(), handle.describe()]);
    const events: HistoryEvent[] = history.events ?? [];
    executions.push({ runId, events, bytes: description.historySize ?? 0 });
    const last: HistoryEvent | undefined = events[events.length - 1];
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    if (executions.length > 100) throw new Error(`${workflowId}: more than 100 executions, giving up`);
  }
  return executions;
}

export function toMs(ts: Timestamp): number {
  if (!ts) return Number.NaN;
  const secondsValue = ts.seconds as unknown;
  const secs = typeof secondsValue === 'number' ? secondsValue : Number(String(secondsValue ?? 0));
  return secs * 1000 + (ts.nanos ?? 0) / 1e6;
}

function longToNumber(value: unknown): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'number' ? value : Number(String(value));
}

/**
 * The coding attempt whose Coder turn this event begins (the turn's first model step), or null.
 * Model steps are regular activities in every version of the workflow; the turn's opening moved
 * to a local activity, which history records only as a marker.
 */
function coderAttemptStarted(event: HistoryEvent): number | null {
  const attrs = event.activityTaskScheduledEventAttributes;
  if (attrs?.activityType?.name !== 'agentStep') return null;
  const input = decodePayload(attrs.input?.payloads?.[0]) as { ref?: string; stepIndex?: number } | undefined;
  const match = /\/coder-(\d+)$/.exec(input?.ref ?? '');
  return match && input?.stepIndex === 0 ? Number(match[1]) : null;
}

export interface IterationHistory {
  /** 0 is setup and planning, before the first coding attempt. */
  iteration: number;
  events: number;
  /** From the history size the server reports at each workflow task start; approximate to one task. */
  bytes: number;
}

export interface HistorySummary {
  executions: number;
  events: number;
  bytes: number;
  perIteration: IterationHistory[];
}

export function summarizeHistory(executions: Execution[]): HistorySummary {
  const perIteration = new Map<number, IterationHistory>();
  let iteration = 0;
  for (const execution of executions) {
    // Cumulative size at each event, from the workflow task starts that carry it.
    let sizeSoFar = 0;
    let lastMark = { iteration, size: 0 };
    const entry = (i: number): IterationHistory => {
      let e = perIteration.get(i);
      if (!e) perIteration.set(i, (e = { iteration: i, events: 0, bytes: 0 }));
      return e;
    };
    for (const event of execution.events) {
      const started = coderAttemptStarted(event);
      if (started !== null && started !== iteration) {
        entry(lastMark.iteration).bytes += sizeSoFar - lastMark.size;
        iteration = started;
        lastMark = { iteration, size: sizeSoFar };
      }
      const wftSize = longToNumber(event.workflowTaskStartedEventAttributes?.historySizeBytes);
      if (wftSize > 0) sizeSoFar = wftSize;
      entry(iteration).events += 1;
    }
    entry(lastMark.iteration).bytes += Math.max(0, execution.bytes - lastMark.size);
  }
  return {
    executions: executions.length,
    events: executions.reduce((n, e) => n + e.events.length, 0),
    bytes: executions.reduce((n, e) => n + e.bytes, 0),
    perIteration: [...perIteration.values()].sort((a, b) => a.iteration - b.iteration),
  };
}

export interface TimeBreakdown {
  /** First event to last event, as the server saw it. */
  serverWallMs: number;
  /** Activity execution time (started to closed) by activity type, summed over the run. */
  activityExecMs: Record<string, number>;
  activityCount: Record<string, number>;
  /** Scheduled to started: time activity tasks waited for the worker to pick them up. */
  activityQueueMs: number;
  /** Workflow tasks, scheduled to completed: the worker replaying and deciding, plus matching. */
  workflowTaskMs: number;
  /** The part of workflowTaskMs before the worker picked the task up (scheduled to started). */
  workflowTaskQueueMs: number;
  workflowTasks: number;
  /** Local activities (workspace and conversation steps), which run inside workflow tasks. */
  localActivities: number;
  /**
   * The sums above count a moment twice when activities ran side by side (the failure-memory
   * writes run in the background of the agents): sum minus the length of their union.
   */
  overlapMs: number;
  /** Server wall time covered by no activity and no workflow task. */
  uncoveredMs: number;
}

function unionLength(intervals: Array<[number, number]>): number {
  const sorted = intervals.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  let total = 0;
  let [curStart, curEnd] = [Number.NaN, Number.NaN];
  for (const [a, b] of sorted) {
    if (Number.isNaN(curStart) || a > curEnd) {
      if (!Number.isNaN(curStart)) total += curEnd - curStart;
      [curStart, curEnd] = [a, b];
    } else {
      curEnd = Math.max(curEnd, b);
    }
  }
  if (!Number.isNaN(curStart)) total += curEnd - curStart;
  return total;
}

/**
 * Where a run's time went, from the server's event times: activity execution by
 * type, activity tasks waiting to be picked up, workflow tasks. When activities
 * run one at a time these tile the server wall time; `overlapMs` says by how much
 * parallel ones made the sums exceed it.
 */
export function timeBreakdown(executions: Execution[]): TimeBreakdown {
  const activityExecMs: Record<string, number> = {};
  const activityCount: Record<string, number> = {};
  const intervals: Array<[number, number]> = [];
  let activityQueueMs = 0;
  let workflowTaskMs = 0;
  let workflowTaskQueueMs = 0;
  let workflowTasks = 0;
  let localActivities = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const { events } of executions) {
    const byId = new Map<string, HistoryEvent>();
    for (const event of events) {
      const id = String(event.eventId);
      byId.set(id, event);
      const at = toMs(event.eventTime);
      first = Math.min(first, at);
      last = Math.max(last, at);
      if (event.markerRecordedEventAttributes?.markerName === 'core_local_activity') localActivities += 1;
      const closed =
        event.activityTaskCompletedEventAttributes ??
        event.activityTaskFailedEventAttributes ??
        event.activityTaskTimedOutEventAttributes ??
        event.activityTaskCanceledEventAttributes;
      if (closed) {
        const scheduled = byId.get(String(closed.scheduledEventId));
        const startedEvent = byId.get(String(closed.startedEventId));
        const type = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? 'unknown';
        if (scheduled && startedEvent) {
          const [s, st] = [toMs(scheduled.eventTime), toMs(startedEvent.eventTime)];
          activityExecMs[type] = (activityExecMs[type] ?? 0) + (at - st);
          activityQueueMs += st - s;
          activityCount[type] = (activityCount[type] ?? 0) + 1;
          intervals.push([s, at]);
        }
      }
      const wftDone =
        event.workflowTaskCompletedEventAttributes ??
        event.workflowTaskFailedEventAttributes ??
        event.workflowTaskTimedOutEventAttributes;
      if (wftDone) {
        const scheduled = byId.get(String(wftDone.scheduledEventId));
        const startedEvent = byId.get(String(wftDone.startedEventId));
        if (scheduled) {
          workflowTaskMs += at - toMs(scheduled.eventTime);
          if (startedEvent) workflowTaskQueueMs += toMs(startedEvent.eventTime) - toMs(scheduled.eventTime);
          workflowTasks += 1;
          intervals.push([toMs(scheduled.eventTime), at]);
        }
      }
    }
  }
  const summed = Object.values(activityExecMs).reduce((a, b) => a + b, 0) + activityQueueMs + workflowTaskMs;
  const covered = unionLength(intervals);
  return {
    serverWallMs: last - first,
    activityExecMs,
    activityCount,
    activityQueueMs,
    workflowTaskMs,
    workflowTaskQueueMs,
    workflowTasks,
    localActivities,
    overlapMs: summed - covered,
    uncoveredMs: last - first - covered,
  };
}
