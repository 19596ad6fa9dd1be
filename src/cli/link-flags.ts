import type { LinkOverrides } from '../api/linked-run';
import { UserInputError } from '../shared/errors';
import { positiveInteger } from './args';
import { dollars } from './run-command';

/** The settings `continue`, `retry` and `fork` may change, as commander hands them over. */
export interface LinkFlags {
  maxIterations?: string;
  model?: string;
  maxCost?: string;
  onLimit?: string;
}

export function linkOverrides(flags: LinkFlags): LinkOverrides {
  const overrides: LinkOverrides = {};
  const maxIterations = positiveInteger(flags.maxIterations, 'max-iterations');
  if (maxIterations !== undefined) overrides.maxIterations = maxIterations;
  if (flags.model !== undefined) overrides.model = flags.model;
  if (flags.maxCost !== undefined) overrides.maxCostUsd = dollars(flags.maxCost);
  if (flags.onLimit !== undefined) {
    if (flags.onLimit !== 'fail' && flags.onLimit !== 'ask') {
      throw new UserInputError(`--on-limit must be "fail" or "ask", got "${flags.onLimit}"`);
    }
    overrides.onLimit = flags.onLimit;
  }
  return overrides;
}
