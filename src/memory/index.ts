/**
 * Failure memory: what went wrong in past runs, stored so later runs can learn from it.
 * Import from here; `pg` and PGlite stay inside this folder and load only when memory opens.
 */
export { openFailureMemory, embeddedDataDir, type OpenMemoryOptions } from './open-memory';
export * from './failure-memory';
export { formatLessons, LESSONS_HEADING } from './format-lessons';
export {
  MemoryError,
  MemoryLockedError,
  MemoryQueryError,
  MemoryUnavailableError,
  isRetryableMemoryError,
} from './memory-errors';
