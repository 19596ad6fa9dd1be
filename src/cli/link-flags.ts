import type { LinkOverrides } from '../api/linked-run';
import { positiveInteger } from '../shared/option-numbers';
import { readInstructionsFile } from './instructions-file';
import { dollars } from './run-command';

/** The settings `continue`, `retry` and `fork` may change, as commander hands them over. */
export interface LinkFlags {
  maxIterations?: string;
  model?: string;
  maxCost?: string;
  onLimit?: string;
  /** `--instructions FILE`: read here, before anything is started. */
  instructions?: string;
}

export function linkOverrides(flags: LinkFlags): LinkOverrides {
  const overrides: LinkOverrides = {};
  const maxIterations = positiveInteger(flags.maxIterations, 'max-iterations');
  if (maxIterations !== undefined) overrides.maxIterations = maxIterations;
  if (flags.model !== undefined) overrides.model = flags.model;
  if (flags.maxCost !== undefined) overrides.maxCostUsd = dollars(flags.maxCost);
  // Checked with the rest of the request (linkedRunRequest), for the library's callers too.
  if (flags.onLimit !== undefined) overrides.onLimit = flags.onLimit as 'fail' | 'ask';
  if (flags.instructions !== undefined) overrides.instructions = readInstructionsFile(flags.instructions);
  return overrides;
}
