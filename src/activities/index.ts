import { createAgentActivities, type AgentActivityDeps } from './agent-activities';
import { createCommandActivities } from './command-activities';
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
  return {
    ...createAgentActivities({ ...deps, recallLessons: createLessonRecall(deps) }),
    ...createTestActivities(deps),
    ...createCommandActivities(deps),
    ...createMemoryActivities(deps),
    ...createRepoActivities(deps),
    ...createWorkspaceActivities(deps),
    ...createEvalActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
