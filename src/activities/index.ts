import { openTurn } from '../agents/agent-turn';
import type { OpenTurnInput } from '../agents/turn-context';
import { createAgentActivities, turnSources, type AgentActivityDeps } from './agent-activities';
import { createEvalActivities, type EvalActivityDeps } from './eval-activities';
import { createLessonRecall, createMemoryActivities, type MemoryActivityDeps } from './memory-activities';
import { createRepoActivities, type RepoActivityDeps } from './repo-activities';
import { createTestActivities, type TestActivityDeps } from './test-activities';
import { createWorkspaceActivities } from './workspace-activities';

export type ActivityDeps = Omit<AgentActivityDeps, 'recallLessons'> &
  TestActivityDeps &
  MemoryActivityDeps &
  RepoActivityDeps &
  EvalActivityDeps;

/** Builds every activity the worker registers, closed over the worker's dependencies. */
export function createActivities(deps: ActivityDeps) {
  const agentDeps = { ...deps, recallLessons: createLessonRecall(deps) };
  const sources = turnSources(agentDeps);
  const openTurnHere = (input: OpenTurnInput) => openTurn(deps.store, input, sources);
  return {
    ...createAgentActivities(agentDeps),
    ...createTestActivities({ ...deps, openTurn: openTurnHere }),
    ...createMemoryActivities(deps),
    ...createRepoActivities({ ...deps, openTurn: openTurnHere }),
    ...createWorkspaceActivities({ ...deps, openTurn: openTurnHere }),
    ...createEvalActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
