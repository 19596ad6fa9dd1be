import { withWorkspace } from '../tools/workspace-fs';
import { rankFiles, type MapQuery } from './rank';
import { estimateTokens, renderMap } from './render';
import { DEFAULT_SCAN_LIMITS, scanWorkspace, type ScanLimits } from './scan';

export { estimateTokens } from './render';
export type { MapQuery } from './rank';

/** The Planner sees the whole repository; later agents only the part their plan is about. */
export const PLANNER_MAP_TOKENS = 2_000;
export const FOLLOWER_MAP_TOKENS = 1_000;

export interface RepositoryMapOptions {
  /** The section never exceeds this many tokens (characters / 4), its heading included. */
  maxTokens: number;
  /** Only files relevant to the query are listed; everything else stays folder counts. */
  onlyRelevant?: boolean;
  limits?: Partial<ScanLimits>;
}

/**
 * The "Repository map" section of an agent's first message, or null for an empty workspace:
 * the workspace's files as a tree, the definitions of the files most relevant to the query on
 * their lines, the next ones as bare paths, the rest as folder counts, within `maxTokens`.
 */
export async function buildRepositoryMap(
  workspace: string,
  query: MapQuery,
  options: RepositoryMapOptions,
): Promise<string | null> {
  const limits = { ...DEFAULT_SCAN_LIMITS, ...options.limits };
  const scan = await withWorkspace(workspace, (ws) => scanWorkspace(ws, query.text, limits));
  if (scan.files.length === 0) return null;
  const ranked = rankFiles(scan.files, query);
  const count = `${scan.files.length}${scan.truncated ? '+' : ''} files${scan.truncated ? ', listing stopped there' : ''}`;
  const heading = options.onlyRelevant
    ? `Repository map, the part relevant to the plan (${count}; top-level definitions of the most relevant files; folder counts for the rest):`
    : `Repository map (${count}; top-level definitions of the files most relevant to the task, then further files, then folder counts):`;
  const maxChars = options.maxTokens * 4 - heading.length - 1;
  if (maxChars <= 0) return null;
  const lines = renderMap(ranked, { maxChars, onlyRelevant: options.onlyRelevant === true });
  if (lines.length === 0) return null;
  const map = `${heading}\n${lines.join('\n')}`;
  // renderMap keeps to maxChars; this guards the promise the rest of the prompt relies on.
  if (estimateTokens(map) > options.maxTokens) throw new Error('repository map over its token budget');
  return map;
}
