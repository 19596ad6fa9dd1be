import type { LogEntry, LogLevel } from '@temporalio/worker';
import { FAILURE_TYPES } from '../shared/failure-types';
import { printableLine } from '../shared/terminal-text';

/** The fields of an entry's metadata worth a line: which run, which step, which try. */
const KEPT = ['workflowId', 'workflowType', 'activityType', 'attempt', 'taskQueue', 'sdkComponent'] as const;

/**
 * One entry, one line: `time LEVEL message key=value …`. The SDK's default spreads each entry's
 * metadata over a dozen lines and the workflow bundler's report over dozens more; a worker's log
 * is read line by line (and grepped), so only the first line of a message and a few fields stay,
 * and an error keeps its message. Messages may quote model or repository text: rendered printable.
 */
export function logLine(entry: LogEntry): string {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const meta = (entry.meta ?? {}) as Record<string, unknown>;
  const fields: string[] = [];
  for (const key of KEPT) {
    const value = meta[key];
    if (value !== undefined && value !== null && value !== '') fields.push(`${key}=${String(value)}`);
  }
  const error = meta.error ?? meta.failure;
  if (error instanceof Error) fields.push(`error=${JSON.stringify(error.message)}`);
  else if (typeof error === 'string') fields.push(`error=${JSON.stringify(error)}`);
  const [first = '', ...rest] = entry.message.split('\n');
  const more = rest.filter((l) => l.trim()).length;
  return printableLine(
    `${time} ${entry.level.padEnd(5)} ${first}${more ? ` (+${more} lines)` : ''}${fields.length ? ` ${fields.join(' ')}` : ''}`,
  );
}

/**
 * What the SDK says at every start and stop of a healthy worker: the workflow bundler's report,
 * each queue's state changes, that nothing polls for Nexus tasks, and, for the host's own queues
 * (which run only steps, by design), "No workflows registered" as a warning. `aca worker` says
 * what it serves in one line of its own instead; at DEBUG and TRACE these lines stay.
 */
const ROUTINE_WORKER_LINES = [
  /^asset workflow-bundle-/,
  /^Workflow bundle created/,
  /^Worker state changed/,
  /^No Nexus services registered/,
  /^No workflows registered, not polling for workflow tasks/,
];

export function isRoutineWorkerLine(entry: LogEntry): boolean {
  const meta = (entry.meta ?? {}) as Record<string, unknown>;
  return (
    meta.sdkComponent === 'worker' &&
    (entry.level === 'INFO' || entry.level === 'WARN') &&
    ROUTINE_WORKER_LINES.some((pattern) => pattern.test(entry.message))
  );
}

/**
 * A run that ended FAILED fails its workflow on purpose (see src/shared/run-failure.ts); the SDK
 * reports every workflow failure as a warning with its stack. For aca that is a run's outcome:
 * an INFO line `run ended FAILED <reason> …`, or nothing below INFO.
 */
export function runEndedEntry(entry: LogEntry): LogEntry | null {
  const meta = (entry.meta ?? {}) as Record<string, unknown>;
  const error = meta.error;
  if (meta.sdkComponent !== 'worker' || !/^Workflow failed/.test(entry.message)) return null;
  if (!(error instanceof Error) || (error as { type?: unknown }).type !== FAILURE_TYPES.runFailed)
    return null;
  const { error: _error, ...rest } = meta;
  return { ...entry, level: 'INFO', message: `run ended ${error.message}`, meta: rest };
}

/** Log lines at `level`, without a healthy worker's routine start and stop lines above DEBUG. */
export function logLineWriter(level: LogLevel): (entry: LogEntry) => void {
  const verbose = level === 'TRACE' || level === 'DEBUG';
  const infoShown = verbose || level === 'INFO';
  return (entry) => {
    if (!verbose && isRoutineWorkerLine(entry)) return;
    const ended = runEndedEntry(entry);
    if (ended) {
      if (infoShown) writeLogLine(ended);
      return;
    }
    writeLogLine(entry);
  };
}

/** Writes entries as log lines: warnings and errors to stderr, the rest to stdout. */
export function writeLogLine(entry: LogEntry): void {
  const stream = entry.level === 'WARN' || entry.level === 'ERROR' ? process.stderr : process.stdout;
  stream.write(`${logLine(entry)}\n`);
}

export type { LogLevel };
