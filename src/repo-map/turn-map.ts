import type { AgentRole, Analysis, Plan } from '../shared/types';
import { buildRepositoryMap, FOLLOWER_MAP_TOKENS, PLANNER_MAP_TOKENS } from './repo-map';

/** What an opening turn knows that the map is ranked against. */
export interface TurnMapRequest {
  workspace: string;
  role: AgentRole;
  task: string;
  /** The run's plan, when the Planner submitted one (null for the Planner itself). */
  plan: Plan | null;
  /** For the Reflector: the failing tests' names, which often name the code at fault. */
  failingTests?: readonly string[];
  /** The latest analysis, from attempt 2 on: the files it names rank with the plan's. */
  analysis?: Analysis | null;
}

export interface TurnMapBudgets {
  planner: number;
  others: number;
}

export const DEFAULT_TURN_MAP_BUDGETS: TurnMapBudgets = {
  planner: PLANNER_MAP_TOKENS,
  others: FOLLOWER_MAP_TOKENS,
};

/**
 * The map for one agent's opening message. The Planner gets the whole repository ranked by the
 * task; the others get only the part their plan is about (its files first, then the files its
 * words point at), in a smaller budget, since they start from the plan and not from scratch.
 */
export function buildTurnMap(
  request: TurnMapRequest,
  budgets: TurnMapBudgets = DEFAULT_TURN_MAP_BUDGETS,
): Promise<string | null> {
  if (request.role === 'planner') {
    return buildRepositoryMap(request.workspace, { text: request.task }, { maxTokens: budgets.planner });
  }
  const { plan, analysis } = request;
  const text = [
    request.task,
    ...(plan ? [plan.summary, ...plan.steps, ...plan.files] : []),
    ...(analysis ? [analysis.rootCause, analysis.fixHypothesis, ...analysis.filesToChange] : []),
    ...(request.failingTests ?? []),
  ].join('\n');
  return buildRepositoryMap(
    request.workspace,
    { text, files: [...(plan?.files ?? []), ...(analysis?.filesToChange ?? [])] },
    { maxTokens: budgets.others, onlyRelevant: true },
  );
}
