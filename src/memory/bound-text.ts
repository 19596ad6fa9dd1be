/**
 * Size limits for text that goes into the database or into a prompt. Memory grows with every
 * failed iteration and lessons are pasted into the Planner's context, so nothing is unbounded.
 */

export const LIMITS = {
  task: 8_000,
  /** Test output is kept from the END: runners print the failure summary last. */
  testOutput: 16_000,
  analysis: 4_000,
  fix: 4_000,
  fileCount: 100,
  filePath: 500,
} as const;

export { clipEnd, clipStart, oneLine } from '../shared/clip-text';
