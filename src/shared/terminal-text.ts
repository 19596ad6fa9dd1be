/**
 * Text from the model, the code under test or a repository, made safe to show in a terminal.
 *
 * Everything aca prints about a run passes through here: a diff line, a file name, a summary, an
 * analysis, an error. A character that a terminal acts on instead of showing, or that shows as
 * nothing, could hide or fake what a reviewer reads (erase a line of a diff, write the clipboard
 * through OSC 52, set the window title, reorder a line with a bidi override, print a forged
 * "SUCCESS" line), so each one is shown as a visible escape:
 *
 * - control characters (Unicode Cc): C0 but newline and tab, DEL, and C1 (0x9b alone starts a
 *   CSI sequence on terminals that take 8-bit controls): `\x1b`, `\x7f`, `\u009b`;
 * - format characters (Cf), which are invisible by definition: the bidi embeddings, overrides and
 *   isolates (U+202A–202E, U+2066–2069) and marks (U+200E, U+200F, U+061C), zero-width space,
 *   joiners (ZWJ and ZWNJ are allowed inside JavaScript identifiers, so `a` and `a\u200d` are two
 *   names that look alike), word joiner, BOM, soft hyphen, tag characters (U+E0000–E007F, used to
 *   smuggle invisible text); the cost is that emoji sequences joined with ZWJ and Persian text
 *   written with ZWNJ show the escape;
 * - line and paragraph separators (U+2028, U+2029), which some terminals and editors break on;
 * - characters that render as blank but are letters or marks, so they can hide inside a name:
 *   the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the combining grapheme joiner (U+034F)
 *   and the variation selectors (U+FE00–FE0F, U+E0100–E01EF; `❤️` shows as `❤\ufe0f`);
 * - lone surrogates, which no encoding can print: `\udc9b`;
 * - bytes that are not UTF-8, when the text comes as bytes: `\xNN` with NN of 80 or more (a
 *   character is never written that way, so a raw byte and a character cannot be confused).
 *
 * Spaces of other widths (no-break space, em space) are left alone: they show as space.
 * A backslash is left alone too, so a line of code holding the four characters `\x1b` looks like
 * one holding the escape character itself; callers that need to tell them apart (aca diff) count
 * the lines that carried a hidden character and say so.
 */

/** Hidden characters that are not control characters (Cc), as a regular expression class body. */
const HIDDEN_OTHER =
  '\\p{Cf}\\p{Zl}\\p{Zp}\\p{Cs}\\u034f\\u115f\\u1160\\u3164\\uffa0\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}';

// Written as classes and alternatives, without a lookahead at every position: a diff can be
// tens of megabytes.
/** Every hidden character but newline and tab, for text that may span lines. */
const HIDDEN = new RegExp(`[^\\t\\n\\P{Cc}]|[${HIDDEN_OTHER}]`, 'gu');
/** Every hidden character, newline and tab included, for a field that must stay one line. */
const HIDDEN_IN_LINE = new RegExp(`[\\p{Cc}${HIDDEN_OTHER}]`, 'gu');
/** As HIDDEN, but a carriage return that ends a line overwrites nothing (CRLF files), so it may stay. */
const HIDDEN_KEEPING_CRLF = new RegExp(`[^\\t\\n\\r\\P{Cc}]|[${HIDDEN_OTHER}]|\\r(?!\\n|$)`, 'gu');
/** What a name must not hold as it is: hidden characters, and the quote and backslash of quoting. */
const NEEDS_QUOTES = new RegExp(`["\\\\\\p{Cc}${HIDDEN_OTHER}]`, 'u');

/** Stand-in code points for bytes that are not UTF-8 (as Python's surrogateescape). */
const BYTE_BASE = 0xdc00;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');

function escapeCodePoint(cp: number, bytesEscaped: boolean): string {
  if (cp === 0x0a) return '\\n';
  if (cp === 0x09) return '\\t';
  if (cp < 0x80) return `\\x${hex(cp, 2)}`;
  if (bytesEscaped && cp >= BYTE_BASE + 0x80 && cp <= BYTE_BASE + 0xff) return `\\x${hex(cp - BYTE_BASE, 2)}`;
  return cp > 0xffff ? `\\u{${hex(cp, 5)}}` : `\\u${hex(cp, 4)}`;
}

const escapeChar =
  (bytesEscaped = false) =>
  (char: string): string =>
    escapeCodePoint(char.codePointAt(0)!, bytesEscaped);

/**
 * Text that may span lines (a multi-line message), with every hidden character but newline and
 * tab shown as an escape. Applying it twice changes nothing.
 */
export function printable(text: string): string {
  return text.replace(HIDDEN, escapeChar());
}

/**
 * A whole line as it is written out (the last guard of the CLI's output): printable(), except that
 * a carriage return ending the line stays, since the newline written after it leaves nothing for
 * it to overwrite (a CRLF file's lines in a diff).
 */
export function printableOutput(line: string): string {
  return line.replace(HIDDEN_KEEPING_CRLF, escapeChar());
}

/**
 * A field printed on one line (a summary, an analysis, a status line): newlines and tabs are
 * shown as `\n` and `\t` as well, so the field can neither forge a line nor widen past its room.
 */
export function printableLine(text: string): string {
  return text.replace(HIDDEN_IN_LINE, escapeChar());
}

/**
 * A file name or test id, as git C-quotes one: as it is when it holds nothing hidden, else in
 * double quotes with `\"`, `\\`, `\n`, `\t` and the escapes of printable(). A byte that is not
 * UTF-8, as textKeepingBytes() keeps it, shows as `\xNN`.
 */
export function printableName(name: string): string {
  if (!NEEDS_QUOTES.test(name)) return name;
  const inner = name.replace(/["\\]/g, (c) => `\\${c}`).replace(HIDDEN_IN_LINE, escapeChar(true));
  return `"${inner}"`;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes as UTF-8, or null when they are not UTF-8 throughout. */
function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Bytes as text that keeps every byte: UTF-8 decoded, each byte that is not part of a valid
 * sequence mapped to U+DC80–DCFF (a lone surrogate, which valid UTF-8 never decodes to).
 */
export function textKeepingBytes(bytes: Uint8Array): string {
  return decodeKeepingBytes(bytes);
}

function decodeKeepingBytes(bytes: Uint8Array): string {
  const text = decodeUtf8(bytes);
  if (text !== null) return text;
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const need = b >= 0xf0 && b <= 0xf4 ? 3 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xc2 && b <= 0xdf ? 1 : 0;
    if (b < 0x80) {
      out += String.fromCharCode(b);
      i += 1;
      continue;
    }
    let cp = need === 3 ? b & 0x07 : need === 2 ? b & 0x0f : b & 0x1f;
    let ok = need > 0;
    for (let k = 1; ok && k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (c & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if (ok && need === 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (ok && need === 3 && (cp < 0x10000 || cp > 0x10ffff)) ok = false;
    if (ok) {
      out += String.fromCodePoint(cp);
      i += need + 1;
    } else {
      out += String.fromCharCode(BYTE_BASE + b);
      i += 1;
    }
  }
  return out;
}

/**
 * Bytes (git's output) for the terminal, line by line: each line decoded as UTF-8, bytes that are
 * not UTF-8 shown as `\xNN`, hidden characters as escapes (a carriage return that ends a line
 * stays: it overwrites nothing). `escaped` counts the lines that held anything shown as an escape.
 */
export function printableBytes(bytes: Uint8Array): { text: string; escaped: number } {
  // Usually the whole output is UTF-8 with nothing hidden: one decode and one scan say so.
  const whole = decodeUtf8(bytes);
  if (whole !== null && !new RegExp(HIDDEN_KEEPING_CRLF.source, 'u').test(whole)) {
    return { text: whole, escaped: 0 };
  }
  const lines: string[] = [];
  let escaped = 0;
  for (let start = 0; start <= bytes.length;) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    const text = decodeKeepingBytes(bytes.subarray(start, end));
    const shown = text.replace(HIDDEN_KEEPING_CRLF, escapeChar(true));
    if (shown !== text) escaped += 1;
    lines.push(shown);
    start = end + 1;
  }
  return { text: lines.join('\n'), escaped };
}

/**
 * JSON for a terminal: JSON.stringify escapes C0 and lone surrogates already; this also writes
 * every other hidden character (DEL, C1, bidi, zero-width, …) as a `\uXXXX` escape. Outside
 * strings JSON holds only ASCII, so the output parses to the same value.
 */
export function jsonForTerminal(value: unknown, space?: number): string {
  // A character past U+FFFF is written as its two UTF-16 halves, as JSON spells it.
  return JSON.stringify(value, null, space).replace(HIDDEN, (char) =>
    Array.from({ length: char.length }, (_, i) => `\\u${hex(char.charCodeAt(i), 4)}`).join(''),
  );
}
