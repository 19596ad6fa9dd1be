import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import type { FailureMemory } from '../memory/failure-repository';
import { isRetryableMemoryError, MemoryLockedError } from '../memory/memory-errors';
import type { Analysis, Language, Lesson } from '../shared/types';
import { describeTestReport } from '../agents/user-message';
import { withHeartbeats } from './heartbeats';
import type { ReportStore } from '../store/report-store';
import { FAILURE_TYPES } from '../shared/failure-types';

export interface MemoryActivityDeps {
  reports: ReportStore;
  /**
   * The worker's failure memory, opened on first use; null when this worker runs without one
   * (e.g. the embedded database is held by another process). Throws when it cannot be reached.
   */
  memory: () => Promise<FailureMemory | null>;
}

export interface RecallInput {
  workflowId: string;
  task: string;
}

export interface RememberRunInput {
  workflowId: string;
  task: string;
  language: Language;
}

export interface RememberAttemptInput {
  workflowId: string;
  iteration: number;
  passRate: number;
  passed: number;
  failed: number;
  /** Set when the attempt failed: the full report is read from the run's files, not history. */
  reportRef: string | null;
  analysis: Analysis | null;
  /** Why there is no analysis when the Reflector's turn failed. */
  analysisError: string | null;
}

export interface RememberOutcomeInput {
  workflowId: string;
  status: 'success' | 'failed';
  reason: string | null;
  /** On success after failures: what made the difference, stored against those failures. */
  fix: { iteration: number; summary: string } | null;
  /** The run's last attempt, stored first in the same activity (one step fewer as a run ends). */
  lastAttempt?: RememberAttemptInput;
}

/** Retryable for outages; permanent for refusals, so a bad row cannot loop for an hour. */
function asActivityFailure(err: unknown, action: string): ApplicationFailure {
  const message = `failure memory: ${action}: ${err instanceof Error ? err.message : String(err)}`;
  return isRetryableMemoryError(err)
    ? ApplicationFailure.retryable(message, FAILURE_TYPES.memoryUnavailable)
    : ApplicationFailure.nonRetryable(message, FAILURE_TYPES.memoryQueryError);
}

/** Lessons for the Planner: bounded in number and size, the run's own failures excluded. */
function findLessons(memory: FailureMemory, query: RecallInput): Promise<Lesson[]> {
  return memory.findSimilarFailures(query.task, { excludeWorkflowId: query.workflowId, limit: 3 });
}

/**
 * How long a Planner's opening step waits for failure memory before it plans without lessons.
 * Under the 10 s the workflow allows a step beyond its model timeout, so that a slow database and
 * a slow model together cannot time the step out.
 */
export const RECALL_WAIT_MS = 8_000;

/**
 * Lessons for the Planner, looked up as its turn opens: they become part of its first message,
 * stored with the conversation, so a retried step never looks them up again. Lessons help but are
 * not needed, so an outage is retried only until `waitMs` has passed, and then the run plans
 * without them.
 */
export function createLessonRecall(
  deps: Pick<MemoryActivityDeps, 'memory'>,
  waitMs = RECALL_WAIT_MS,
): (query: RecallInput) => Promise<Lesson[]> {
  const lookUp = async (query: RecallInput): Promise<Lesson[]> => {
    const memory = await deps.memory();
    return memory ? findLessons(memory, query) : [];
  };
  return async (query) => {
    const deadline = Date.now() + waitMs;
    for (let attempt = 0; ; attempt++) {
      let timer: NodeJS.Timeout | undefined;
      try {
        // A connection that never answers must not hold the step past the deadline either.
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${waitMs} ms`)),
            Math.max(0, deadline - Date.now()),
          );
        });
        return await Promise.race([lookUp(query), late]);
      } catch (err) {
        const pause = Math.min(500 * 2 ** attempt, 4_000);
        if (!isRetryableMemoryError(err) || Date.now() + pause >= deadline) {
          log.warn('planning without lessons: failure memory did not answer', {
            error: err instanceof Error ? err.message : String(err),
            attempts: attempt + 1,
          });
          return [];
        }
        await sleep(pause);
      } finally {
        clearTimeout(timer);
      }
    }
  };
}

export function createMemoryActivities(deps: MemoryActivityDeps) {
  const withMemory = async <T>(
    action: string,
    fallback: T,
    work: (memory: FailureMemory) => Promise<T>,
  ): Promise<T> => {
    // The beats start before the first open, which for the embedded database can take a while.
    return withHeartbeats(2_000, async () => {
      let memory: FailureMemory | null;
      try {
        memory = await deps.memory();
      } catch (err) {
        throw asActivityFailure(err, action);
      }
      if (!memory) return fallback;
      try {
        return await work(memory);
      } catch (err) {
        throw asActivityFailure(err, action);
      }
    });
  };

  /**
   * One attempt: its iteration row, then (if it failed) its failure row. Both writes are
   * keyed upserts, so a retry after a crash between them completes the pair without
   * duplicating the first.
   */
  const storeAttempt = async (memory: FailureMemory, input: RememberAttemptInput): Promise<void> => {
    await memory.logIteration({
      workflowId: input.workflowId,
      iteration: input.iteration,
      passRate: input.passRate,
      passed: input.passed,
      failed: input.failed,
    });
    if (input.reportRef === null) return;
    const report = await deps.reports.loadReport(input.reportRef);
    if (!report)
      log.warn('test report missing; storing the failure without its output', { ref: input.reportRef });
    await memory.storeFailure({
      workflowId: input.workflowId,
      iteration: input.iteration,
      testOutput: report ? describeTestReport(report) : '',
      rootCause:
        input.analysis?.rootCause ??
        `(no analysis: ${input.analysisError ?? 'the Reflector did not answer'})`,
      fixHypothesis: input.analysis?.fixHypothesis ?? '',
      filesToChange: input.analysis?.filesToChange ?? [],
    });
  };

  return {
    async rememberRun(input: RememberRunInput): Promise<void> {
      await withMemory('create task', undefined, (memory) => memory.createTask(input));
    },

    /**
     * One attempt: its iteration row, then (if it failed) its failure row. Both writes are
     * keyed upserts, so a retry after a crash between them completes the pair without
     * duplicating the first.
     */
    async rememberAttempt(input: RememberAttemptInput): Promise<void> {
      await withMemory('store attempt', undefined, (memory) => storeAttempt(memory, input));
    },

    async rememberOutcome(input: RememberOutcomeInput): Promise<number> {
      return withMemory('store outcome', 0, async (memory) => {
        if (input.lastAttempt) await storeAttempt(memory, input.lastAttempt);
        await memory.updateTaskStatus(input.workflowId, input.status, input.reason);
        if (!input.fix) return 0;
        return memory.recordFix({
          workflowId: input.workflowId,
          iteration: input.fix.iteration,
          summary: input.fix.summary,
        });
      });
    },
  };
}

/**
 * Opens failure memory once, on first use, and shares it between activities. A failed open is
 * forgotten so the next attempt tries again (the database may be back); an embedded database
 * held by another process disables memory for this worker instead of failing every run.
 */
export function lazyMemory(open: () => Promise<FailureMemory>): {
  get: () => Promise<FailureMemory | null>;
  close: () => Promise<void>;
} {
  let opening: Promise<FailureMemory | null> | null = null;
  return {
    get() {
      opening ??= open().catch((err: unknown) => {
        if (err instanceof MemoryLockedError) {
          Runtime.instance().logger.warn(`failure memory disabled on this worker: ${err.message}`);
          return null;
        }
        opening = null;
        throw err;
      });
      return opening;
    },
    async close() {
      const memory = await opening?.catch(() => null);
      opening = null;
      await memory?.close();
    },
  };
}
