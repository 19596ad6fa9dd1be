import { TaskTooLargeError } from './errors';

/**
 * The largest task a run accepts, in UTF-8 bytes. The task travels whole in the workflow's input
 * and in the input of every agent step, and Temporal refuses a payload over 2 MB by terminating
 * the workflow (it warns from 512 KB): 64 KiB keeps a run far from that whatever else a step
 * carries, and is still some 16,000 tokens of text, more than a task needs in every agent's
 * first message. Longer material belongs in a file the task names.
 */
export const MAX_TASK_BYTES = 64 * 1024;

/** Throws TaskTooLargeError for a task over MAX_TASK_BYTES. */
export function checkTaskSize(task: string): void {
  const bytes = Buffer.byteLength(task, 'utf8');
  if (bytes > MAX_TASK_BYTES) throw new TaskTooLargeError(bytes, MAX_TASK_BYTES);
}
