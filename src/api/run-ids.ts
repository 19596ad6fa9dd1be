import { randomInt } from 'node:crypto';

/**
 * Run ids a person can read aloud and type: a few words of the task, then a short random tail
 * from letters and digits that cannot be mistaken for one another (no 0/o, 1/l/i). `fix-mean-k7m2x`
 * rather than `aca-mean-fails-on-empty-input-3fa9c1`. Five characters of 31 give 28 million
 * tails per slug; an id that is taken anyway is refused, never reused (claimRunId).
 */
export const RUN_ID_ALPHABET = '23456789abcdefghjkmnpqrstuvwxyz';
const TAIL_LENGTH = 5;
const SLUG_WORDS = 3;
const SLUG_CHARS = 20;

/** A new run id from the first words of `text` (a task, or what a linked run is). */
export function newRunId(text: string): string {
  let tail = '';
  for (let i = 0; i < TAIL_LENGTH; i++) tail += RUN_ID_ALPHABET[randomInt(RUN_ID_ALPHABET.length)];
  return `${slug(text)}-${tail}`;
}

function slug(text: string): string {
  const words = text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .slice(0, SLUG_WORDS);
  let out = '';
  for (const word of words) {
    const next = out ? `${out}-${word}` : word;
    if (next.length > SLUG_CHARS) break;
    out = next;
  }
  return out || (words[0] ?? 'run').slice(0, SLUG_CHARS);
}
