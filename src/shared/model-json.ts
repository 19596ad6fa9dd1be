import { jsonrepair } from 'jsonrepair';

/**
 * The one place that parses JSON written by a model (tool arguments, tool calls written as
 * text). Model output is hostile: everything else receives `unknown` from here and validates it.
 */
export type ModelJson =
  | {
      ok: true;
      value: unknown;
      /** The repaired text when the original was not valid JSON. */ repaired?: string;
    }
  | { ok: false; error: string };

export interface ModelJsonOptions {
  /**
   * Try jsonrepair when the text is invalid JSON but was written whole. Off when the answer was
   * cut (finish_reason `length`): a repaired cut `create_file` would write a shorter file.
   */
  repair: boolean;
}

export function parseModelJson(text: string, options: ModelJsonOptions): ModelJson {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    const error = `not valid JSON: ${(err as Error).message}`;
    if (!options.repair) return { ok: false, error };
    const shape = scanJsonShape(text);
    if (shape !== 'whole') return { ok: false, error: `${error} (${shape}, so it is not repaired)` };
    let repaired: string;
    try {
      repaired = jsonrepair(text);
      return { ok: true, value: JSON.parse(repaired), repaired };
    } catch {
      return { ok: false, error };
    }
  }
}

export type JsonShape = 'whole' | 'it ends inside a string' | 'its brackets do not balance';

/**
 * Whether JSON-like text was written to its end: every string closed, every `{`/`[` closed by its
 * own partner. Text cut mid-way (an output limit, a dropped stream) fails this, and only text
 * that passes is worth repairing, because then the repair fixes syntax rather than guesses content.
 */
export function scanJsonShape(text: string): JsonShape {
  const open: string[] = [];
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote !== null) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{' || ch === '[') open.push(ch);
    else if (ch === '}' || ch === ']') {
      if (open.pop() !== (ch === '}' ? '{' : '[')) return 'its brackets do not balance';
    }
  }
  if (quote !== null) return 'it ends inside a string';
  return open.length === 0 ? 'whole' : 'its brackets do not balance';
}
