/**
 * How long a line aca shows may be. A diff line can be megabytes (a minified bundle, or a line
 * made long to push what follows it off any screen); shown whole, it floods the terminal and
 * hides its own end. Longer lines are cut, and the cut says how much is left out; `aca diff
 * --raw` prints them whole, and review-risks.ts names every file holding one.
 */
import { printableBytes, printableName } from './terminal-text';

/** The most characters of one line shown, counted after hidden characters became escapes. */
export const MAX_SHOWN_LINE_CHARS = 4000;

/** No character's escape is longer than this many times its UTF-8 bytes (`\xNN` for one byte). */
const MAX_ESCAPE_GROWTH = 4;

/**
 * `text` (lines as printed) with every line over MAX_SHOWN_LINE_CHARS cut to that length and
 * marked with how many characters were left out; `cut` counts the lines cut.
 */
export function cutLongLines(text: string): { text: string; cut: number } {
  let cut = 0;
  const lines = text.split('\n').map((line) => {
    if (line.length <= MAX_SHOWN_LINE_CHARS) return line;
    cut += 1;
    // Never end on half of a surrogate pair.
    const end = /[\ud800-\udbff]/.test(line[MAX_SHOWN_LINE_CHARS - 1]!)
      ? MAX_SHOWN_LINE_CHARS - 1
      : MAX_SHOWN_LINE_CHARS;
    return `${line.slice(0, end)} [... ${line.length - end} more characters not shown]`;
  });
  return { text: lines.join('\n'), cut };
}

/** Whether a line of `bytes` (a file's content) would be cut when a diff shows it. */
export function hasLineTooLongToShow(bytes: Buffer): boolean {
  const quick = Math.floor(MAX_SHOWN_LINE_CHARS / MAX_ESCAPE_GROWTH);
  for (let start = 0; start < bytes.length;) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    // Only a line this long can pass the bound once its escapes are shown; a diff puts one
    // character (+, - or a space) before it.
    if (
      end - start > quick &&
      printableBytes(bytes.subarray(start, end)).text.length + 1 > MAX_SHOWN_LINE_CHARS
    ) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

/** A file name or link target as printableName() shows it, cut as a line would be past the bound. */
export function shownName(name: string): string {
  return cutLongLines(printableName(name)).text;
}
