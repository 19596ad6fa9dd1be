/**
 * What a model's tokens cost, in US dollars per million tokens, and what a step cost.
 *
 * The built-in table holds OpenAI's published list prices for its common models; every other
 * endpoint (vLLM, Ollama, llama.cpp, a proxy) has no price until the user gives one in the file
 * ACA_PRICES names. An unknown price gives no cost (null) rather than a guess: a figure that is
 * wrong is worse than none, and `--max-cost` refuses a model it cannot price.
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import { UserInputError } from '../shared/errors';
import type { TokenUsage } from '../shared/types';

export interface ModelPrice {
  /** Dollars per million prompt tokens not served from the provider's prompt cache. */
  input: number;
  /** Dollars per million prompt tokens served from the cache (the input price when not given). */
  cachedInput: number;
  /** Dollars per million completion tokens, reasoning tokens included. */
  output: number;
}

export type PriceTable = ReadonlyMap<string, ModelPrice>;

const price = (input: number, cachedInput: number, output: number): ModelPrice => ({
  input,
  cachedInput,
  output,
});

/** OpenAI's list prices (standard tier) for the models people most often point aca at. */
export const BUILTIN_PRICES: PriceTable = new Map([
  ['gpt-4o', price(2.5, 1.25, 10)],
  ['gpt-4o-mini', price(0.15, 0.075, 0.6)],
  ['gpt-4.1', price(2, 0.5, 8)],
  ['gpt-4.1-mini', price(0.4, 0.1, 1.6)],
  ['gpt-4.1-nano', price(0.1, 0.025, 0.4)],
  ['o3', price(2, 0.5, 8)],
  ['o3-mini', price(1.1, 0.55, 4.4)],
  ['o4-mini', price(1.1, 0.275, 4.4)],
  ['gpt-5', price(1.25, 0.125, 10)],
  ['gpt-5-mini', price(0.25, 0.025, 2)],
  ['gpt-5-nano', price(0.05, 0.005, 0.4)],
]);

const dollars = z.number().finite().min(0);
const priceFileSchema = z.record(
  z.string().min(1),
  z.strictObject({ input: dollars, cached_input: dollars.optional(), output: dollars }),
);

/** The built-in table with the file's entries over it; no file: the built-in table. */
export function loadPriceTable(file: string | null): PriceTable {
  if (file === null) return BUILTIN_PRICES;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserInputError(`ACA_PRICES: cannot read ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UserInputError(`ACA_PRICES: ${file} is not JSON: ${(err as Error).message}`);
  }
  const parsed = priceFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join('.') : '(top level)';
    throw new UserInputError(
      `ACA_PRICES: ${file}: ${where}: ${issue.message} (expected {"<model>": {"input": N, "cached_input"?: N, "output": N}}, dollars per million tokens)`,
    );
  }
  const table = new Map(BUILTIN_PRICES);
  for (const [model, entry] of Object.entries(parsed.data)) {
    table.set(model, price(entry.input, entry.cached_input ?? entry.input, entry.output));
  }
  return table;
}

/**
 * The price of `model`: its own entry, else the entry of the name without a date suffix
 * (`gpt-4o-mini-2024-07-18`) or a router's vendor prefix (`openai/gpt-4o`). No prefix matching
 * beyond that: `gpt-4o` must not price `gpt-4o-mini`.
 */
export function priceOf(table: PriceTable, model: string): ModelPrice | null {
  const candidates = [model];
  const unprefixed = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  candidates.push(unprefixed);
  for (const name of [model, unprefixed]) {
    const undated = name.replace(/-\d{4}-\d{2}-\d{2}$/, '');
    if (undated !== name) candidates.push(undated);
  }
  for (const name of candidates) {
    const found = table.get(name);
    if (found) return found;
  }
  return null;
}

/** Dollars one step's usage cost at `price`. */
export function costOf(usage: TokenUsage, price: ModelPrice): number {
  const cached = Math.min(usage.cached ?? 0, usage.prompt);
  const perMillion =
    (usage.prompt - cached) * price.input + cached * price.cachedInput + usage.completion * price.output;
  return perMillion / 1_000_000;
}
