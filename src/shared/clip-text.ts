/**
 * Bounds for text that goes into a prompt, the database or a report. Model output and test output
 * can be any size; everything kept from them is clipped here, with a marker that says how much
 * was cut. Results never exceed `max` characters.
 */

/**
 * Keeps the start of `text` (an assertion message, a summary), at most `max` characters. Says how
 * much was cut where that note takes a tenth of the room at most; a narrow cell ends in `…`.
 */
export function clipEnd(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  const marker = `… [${text.length - max} more characters]`;
  if (marker.length * 10 > max) return `${text.slice(0, max - 1).trimEnd()}…`;
  return text.slice(0, max - marker.length).trimEnd() + marker;
}

/** Keeps the end of `text` (runners print the failure summary last), at most `max` characters. */
export function clipStart(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  const marker = `[${text.length - max} characters cut] `;
  if (marker.length * 10 > max) return text.slice(text.length - max);
  return marker + text.slice(text.length - (max - marker.length));
}

/** The start and the end of `text`, at most `max` characters, saying in the middle how much was cut. */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = (cut: number) => `\n[… ${cut} characters cut …]\n`;
  const room = Math.max(0, max - marker(text.length).length);
  const head = Math.ceil(room / 2);
  const tail = room - head;
  const cut = text.length - head - tail;
  return text.slice(0, head) + marker(cut) + (tail > 0 ? text.slice(text.length - tail) : '');
}

/** Collapses whitespace so one field fits on one line of a prompt or a table. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
