/**
 * Words of a task, a path or a definition name, in one normal form so that `parseInvoice`,
 * `parse_invoice`, `parse-invoices.py` and "Parse the invoices" all meet on `parse` and `invoice`.
 */

/** Words too common in tasks and code to say anything about relevance. */
const STOP_WORDS = new Set(
  (
    'the and for with that this from into when then than not are was were has have had but all any ' +
    "can its it's you your our use used using should must make makes made add adds added fix fixes " +
    'fixed new file files code test tests testing pass passes function functions method methods class ' +
    'classes return returns value values implement implements implemented write writes each which ' +
    'what where there their them they will would could also only more most some such other own same ' +
    'does doing done get gets set sets one two via per out off too very just like need needs want ' +
    'src lib index main init py ts js tsx jsx mjs cjs'
  ).split(' '),
);

const MAX_WORD_CHARS = 40;

/** A word's normal form: lower case, a plural `s` dropped, so `invoices` meets `invoice`. */
export function normalizeWord(word: string): string {
  const lower = word.toLowerCase();
  if (lower.length > 4 && lower.endsWith('ies')) return `${lower.slice(0, -3)}y`;
  if (lower.length > 3 && lower.endsWith('s') && !lower.endsWith('ss')) return lower.slice(0, -1);
  return lower;
}

/** Splits identifiers and prose into normalized words, camelCase and snake_case included. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const token of text.match(/[A-Za-z0-9]+/g) ?? []) {
    // parseHTTPResponse -> parse HTTP Response; v2Parser -> v2 Parser
    const parts = token.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g) ?? [];
    for (const part of parts) {
      if (part.length < 3 || part.length > MAX_WORD_CHARS || /^[0-9]+$/.test(part)) continue;
      const word = normalizeWord(part);
      if (!STOP_WORDS.has(word)) words.push(word);
    }
  }
  return words;
}

/** Identifiers named whole in a text (`parse_invoice`, `parseInvoice`), lower-cased. */
export function identifiers(text: string): string[] {
  return (text.match(/[A-Za-z_$][\w$]*/g) ?? [])
    .filter((id) => id.length >= 4 && id.length <= 80 && /[_a-z][A-Z]|_|[a-z][0-9]/.test(id))
    .map((id) => id.toLowerCase());
}

export function uniqueWords(text: string): Set<string> {
  return new Set(splitWords(text));
}
