import type { temporal } from '@temporalio/proto';
import { clipEnd, oneLine } from '../shared/clip-text';

type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;
type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;
type Duration = Timestamp;

/** Temporal's PendingActivityState values, as the proto defines them. */
const STARTED = 2;
/** Temporal's TimeoutType values of the timeouts that mean the worker running a step went silent. */
const WORKER_SILENT_TIMEOUTS = new Set([1 /* START_TO_CLOSE */, 4 /* HEARTBEAT */]);

/** The most of a step's last error the live line shows: one line, enough for a URL and a cause. */
const ERROR_CHARS = 160;

/** What the live line needs to know of one pending step (one activity), read from describe(). */
export interface PendingStep {
  activityId: string;
  /** The workflow's summary of the step ("coder · edit_file src/x.py"), or the activity type. */
  title: string;
  attempt: number;
  maximumAttempts: number;
  lastError: string | null;
  /** The last attempt ended because its worker went silent (a heartbeat or start-to-close timeout). */
  workerWentSilent: boolean;
  started: boolean;
  /** The last sign of life from the worker running it (its heartbeat, else when it started), epoch ms. */
  lastSeenAt: number | null;
  /** How long it may go without a heartbeat (else its start-to-close timeout) before Temporal gives up on that worker, ms. */
  silenceLimitMs: number | null;
  scheduledAt: number | null;
  taskQueue: string | null;
  worker: string | null;
}

export function millisOf(t: Timestamp): number | null {
  if (!t || t.seconds == null) return null;
  return Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

function durationMs(d: Duration): number | null {
  const ms = millisOf(d);
  return ms && ms > 0 ? ms : null;
}

/** A pending activity as the live line sees it; `summaryOf` gives the step's summary by activity id. */
export function pendingStep(
  info: PendingActivity,
  summaryOf: (activityId: string) => string | null,
): PendingStep {
  const activityId = info.activityId ?? '';
  const options = info.activityOptions;
  const startedAt = millisOf(info.lastStartedTime);
  const heartbeatAt = millisOf(info.lastHeartbeatTime);
  return {
    activityId,
    title: summaryOf(activityId) ?? info.activityType?.name ?? 'a step',
    attempt: info.attempt ?? 1,
    maximumAttempts: info.maximumAttempts ?? 0,
    lastError: info.lastFailure?.message ?? null,
    workerWentSilent: WORKER_SILENT_TIMEOUTS.has(
      Number(info.lastFailure?.timeoutFailureInfo?.timeoutType ?? 0),
    ),
    started: info.state === STARTED,
    lastSeenAt: Math.max(heartbeatAt ?? 0, startedAt ?? 0) || null,
    silenceLimitMs: durationMs(options?.heartbeatTimeout) ?? durationMs(options?.startToCloseTimeout),
    scheduledAt: millisOf(info.scheduledTime),
    taskQueue: options?.taskQueue?.name ?? null,
    worker: info.lastWorkerIdentity || null,
  };
}

/** The live line's words for a step, and a key that changes only when those words say something new. */
export interface StepLine {
  text: string;
  /** Same key: nothing new (the seconds counted in `text` are left out). */
  key: string;
}

/**
 * What the run is doing now, in words: the step, its retry and last error, or that the worker
 * running it stopped answering. Model output reaches this text (a tool call's target) and so do
 * errors: the caller renders it for the terminal.
 */
export function stepLine(step: PendingStep, now: number): StepLine {
  const key = [step.activityId, step.title, step.attempt];
  const parts = [step.title];
  if (step.started && step.lastSeenAt !== null && step.silenceLimitMs !== null) {
    const silentMs = now - step.lastSeenAt;
    if (silentMs > step.silenceLimitMs) {
      parts.push(
        `no word from its worker${step.worker ? ` ${step.worker}` : ''} for ${seconds(silentMs)}: it may have stopped; Temporal gives the step to another worker`,
      );
      return { text: parts.join(' · '), key: [...key, 'silent'].join('|') };
    }
  }
  if (step.attempt > 1) {
    const of = step.maximumAttempts > 0 ? ` of ${step.maximumAttempts}` : '';
    const error = step.workerWentSilent
      ? ': the worker running the last attempt stopped answering'
      : step.lastError
        ? `, last error: ${clipEnd(oneLine(step.lastError), ERROR_CHARS)}`
        : '';
    parts.push(`attempt ${step.attempt}${of}${error}`);
  }
  if (!step.started && step.scheduledAt !== null && now - step.scheduledAt > WAITING_NOTICE_MS) {
    parts.push(
      `waiting ${seconds(now - step.scheduledAt)} for a worker${step.taskQueue ? ` on ${step.taskQueue}` : ''}`,
    );
    key.push('waiting');
  }
  return { text: parts.join(' · '), key: key.join('|') };
}

/**
 * The run's own next decision (a workflow task) not taken up for a while: no worker of its task
 * queue answers. Null while nothing is worth saying.
 */
export function waitingDecisionLine(
  task: temporal.api.workflow.v1.IPendingWorkflowTaskInfo | null | undefined,
  taskQueue: string,
  now: number,
): StepLine | null {
  const scheduledAt = millisOf(task?.scheduledTime);
  if (!task || task.state === STARTED || scheduledAt === null || now - scheduledAt <= WAITING_NOTICE_MS)
    return null;
  return {
    text: `waiting ${seconds(now - scheduledAt)} for a worker on ${taskQueue} to take the run's next step`,
    key: 'decision-waiting',
  };
}

/** A step not taken up for this long is worth a word: a worker normally takes it within a second. */
const WAITING_NOTICE_MS = 10_000;

/** The step to show among those pending: the one scheduled last (the others wait on it or beat alongside). */
export function currentStep(steps: PendingStep[]): PendingStep | null {
  return steps.reduce<PendingStep | null>(
    (latest, step) =>
      latest === null || (step.scheduledAt ?? 0) >= (latest.scheduledAt ?? 0) ? step : latest,
    null,
  );
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}
