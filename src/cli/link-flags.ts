import type { LinkOverrides } from '../api/linked-run';
import { positiveInteger } from '../shared/option-numbers';
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
  // Checked with the rest of the request (linkedRunRequest), for the library's callers too.
  if (flags.onLimit !== undefined) overrides.onLimit = flags.onLimit as 'fail' | 'ask';
  return overrides;
}
