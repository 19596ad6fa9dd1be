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

const ELLIPSIS = '…';

/** Keeps the start of `text`, at most `max` characters including the ellipsis. */
export function clipEnd(text: string, max: number): string {
  if (max <= 0) return '';
  if (text.length <= max) return text;
  return text.slice(0, Math.max(0, max - ELLIPSIS.length)).trimEnd() + ELLIPSIS;
}

/** Keeps the end of `text` (the part of test output that names the failure), with a note. */
export function clipStart(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = `[${text.length - max} chars cut]\n`;
  if (max <= note.length) return text.slice(text.length - Math.max(0, max));
  return note + text.slice(text.length - Math.max(0, max - note.length));
}

/** Collapses whitespace so one field fits on one line of a prompt or a table. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
