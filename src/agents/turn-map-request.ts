import type { TurnMapRequest } from '../repo-map/turn-map';
import type { Plan, TestRunReport } from '../shared/types';
import type { OpenTurnInput } from './turn-context';
import type { ConversationStore } from '../store/conversation-store';

/** Failing test names beyond these add nothing to the ranking but length. */
const MAX_FAILING_TESTS = 50;

/** What the repository map of an opening turn is ranked against. */
export async function turnMapRequest(
  store: ConversationStore,
  input: OpenTurnInput,
  report: TestRunReport | null,
): Promise<TurnMapRequest> {
  const { role, task } = input.context;
  return {
    workspace: input.workspace,
    role,
    task,
    plan: role === 'planner' ? null : (input.context.plan ?? (await storedPlan(store, input.ref))),
    analysis: input.context.analysis ?? null,
    failingTests: (report?.cases ?? [])
      .filter((c) => c.status === 'failed' || c.status === 'error')
      .slice(0, MAX_FAILING_TESTS)
      .map((c) => c.name),
  };
}

/**
 * The plan the run's Planner submitted, read from its stored conversation (a sibling of `ref`,
 * named `planner`). The Tester's and Reflector's contexts do not carry the plan through workflow
 * history, and adding it there would change what the workflow sends; the store already has it.
 */
export async function storedPlan(store: ConversationStore, ref: string): Promise<Plan | null> {
  const slash = ref.lastIndexOf('/');
  if (slash < 0) return null;
  const plannerRef = `${ref.slice(0, slash)}/planner`;
  if (plannerRef === ref || !(await store.exists(plannerRef))) return null;
  const conversation = await store.load(plannerRef);
  for (const step of conversation.steps) {
    if (step.finished?.tool === 'submit_plan') return step.finished.plan;
  }
  return null;
}
