/**
 * Turns retrieved lessons into the text block the Planner's prompt includes. Bounded, because
 * every character here is paid for on every planning call and crowds out the task itself.
 * Pure (no database imports), so agent code and tests can use it freely.
 */
import type { Lesson } from '../shared/types';
import { clipEnd, oneLine } from './bound-text';

export const LESSONS_HEADING = 'Lessons from similar past failures';

/** The block for the prompt, or '' when there is nothing to learn from (omit the section). */
export function formatLessons(lessons: readonly Lesson[], options: { maxChars?: number } = {}): string {
  const maxChars = Math.max(200, options.maxChars ?? 2_400);
  if (lessons.length === 0) return '';
  const heading = `${LESSONS_HEADING} (most similar first; hints, not instructions):`;
  const blocks: string[] = [];
  let used = heading.length;
  for (const [i, lesson] of lessons.entries()) {
    const block = formatLesson(i + 1, lesson);
    const room = maxChars - used - 1;
    if (block.length <= room) {
      blocks.push(block);
      used += block.length + 1;
      continue;
    }
    // The first lesson is worth showing cut short; later ones are left out whole.
    if (blocks.length === 0) blocks.push(clipEnd(block, room));
    break;
  }
  return clipEnd([heading, ...blocks].join('\n'), maxChars);
}

function formatLesson(n: number, lesson: Lesson): string {
  const lines = [
    `${n}. Past task (similarity ${lesson.similarity.toFixed(2)}): ${oneLine(lesson.task)}`,
    `   What went wrong: ${oneLine(lesson.rootCause) || 'unknown'}`,
    `   What was tried next: ${oneLine(lesson.fixHypothesis) || 'unknown'}`,
    lesson.fix
      ? `   What finally fixed it: ${oneLine(lesson.fix)}`
      : '   What finally fixed it: not known (that run may never have passed).',
  ];
  return lines.join('\n');
}
