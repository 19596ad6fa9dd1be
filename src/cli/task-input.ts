import * as fs from 'node:fs';
import { TaskTooLargeError, UserInputError } from '../shared/errors';
import { checkTaskSize, MAX_TASK_BYTES } from '../shared/task-size';

/**
 * Reads at most `limit` + 1 bytes: enough to tell a task over the limit from one within it,
 * without reading a whole file or stream that was never meant to be a task.
 */
async function readCapped(stream: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    chunks.push(bytes);
    size += bytes.length;
    if (size > limit) break;
  }
  return Buffer.concat(chunks);
}

function decodeTask(bytes: Buffer, source: string): string {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (text.includes('\0'))
    throw new UserInputError(`the task from ${source} contains a NUL byte; is it a text file?`);
  return text;
}

/**
 * The task of `aca run`: the argument as given, or, for `-`, standard input, or the file of
 * `--task-file`. One of them and only one; a task over MAX_TASK_BYTES is refused here, before
 * anything is read further or started.
 */
export async function readTask(
  argument: string | undefined,
  taskFile: string | undefined,
  terminal: { stdin?: NodeJS.ReadableStream & { isTTY?: boolean }; hint?: (line: string) => void } = {},
): Promise<string> {
  const stdin = terminal.stdin ?? process.stdin;
  if (taskFile !== undefined && argument !== undefined) {
    throw new UserInputError('give the task either as an argument or with --task-file, not both');
  }
  if (taskFile !== undefined) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(taskFile);
    } catch {
      throw new UserInputError(`--task-file ${taskFile} cannot be read: no such file`);
    }
    if (!stat.isFile()) throw new UserInputError(`--task-file ${taskFile} is not a file`);
    if (stat.size > MAX_TASK_BYTES) throw new TaskTooLargeError(stat.size, MAX_TASK_BYTES);
    const task = decodeTask(await readCapped(fs.createReadStream(taskFile), MAX_TASK_BYTES), taskFile);
    checkTaskSize(task);
    return task;
  }
  if (argument === '-') {
    // Typed at a terminal, the task ends with Ctrl-D: say so, or the wait looks like a hang.
    if (stdin.isTTY)
      terminal.hint?.(
        'Type the task, then Ctrl-D on a line of its own (or pipe it in: aca run - < task.md).',
      );
    const bytes = await readCapped(stdin, MAX_TASK_BYTES);
    if (bytes.length > MAX_TASK_BYTES) {
      throw new UserInputError(
        `the task on standard input is over the limit of ${MAX_TASK_BYTES} bytes (${MAX_TASK_BYTES / 1024} KiB); put long material (logs, specifications) in a file of the repository and name that file in the task`,
      );
    }
    const task = decodeTask(bytes, 'standard input');
    checkTaskSize(task);
    return task;
  }
  if (argument === undefined) {
    throw new UserInputError(
      'the task is missing: aca run "<task>", aca run - (from standard input) or --task-file FILE',
    );
  }
  return argument;
}
