/**
 * Failure memory: what went wrong in past runs, stored so later runs can learn from it.
 * Import from here; `pg` and PGlite stay inside this folder and load only when memory opens.
 */
export { openFailureMemory, embeddedDataDir, type OpenMemoryOptions } from './open-memory';
export {
  DEFAULT_FAILURE_KIND,
  type FailureMemory,
  type FailureRecord,
  type FixRecord,
  type IterationRecord,
  type NewTask,
  type PastFailure,
  type SimilarOptions,
  type TaskStatus,
} from './failure-repository';
export { formatLessons, LESSONS_HEADING } from './format-lessons';
export {
  MemoryError,
  MemoryLockedError,
  MemoryQueryError,
  MemoryUnavailableError,
  isRetryableMemoryError,
} from './memory-errors';
