import type { AcaConfig } from '../config';
import { UserInputError } from '../shared/errors';
import { loadPriceTable, priceOf } from './model-prices';

/** `--max-cost`: a positive number of dollars, for a model whose price aca knows; null when not given. */
export function costBudget(value: number | undefined, model: string, config: AcaConfig): number | null {
  if (value === undefined) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new UserInputError(`--max-cost must be a positive number of dollars, got ${String(value)}`);
  }
  if (!priceOf(loadPriceTable(config.pricesFile), model)) {
    throw new UserInputError(
      `--max-cost needs the price of model "${model}", which aca does not know; give it in the JSON file ACA_PRICES names ({"${model}": {"input": N, "output": N}}, dollars per million tokens)`,
    );
  }
  return value;
}
