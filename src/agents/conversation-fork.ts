import type { Conversation, ConversationStore } from '../store/conversation-store';

/**
 * Where in a turn a step of a new execution (a Temporal Reset) picks it up: before model step
 * `step`, or at the file-tool call `call` (of the step that asked for it).
 */
export type TurnPoint = { step: number } | { call: string };

/**
 * A Reset starts a new execution whose conversations are keyed anew (so the model is asked again),
 * yet the history it keeps up to the reset point holds the turn's opening and its first steps,
 * made under the execution that was reset (`openedAs`). The new execution's first step of that
 * turn takes the conversation over as it stood at that point, and goes on from there: nothing the
 * old execution did after the point reaches the new one.
 */
export async function takeUpConversation(
  store: ConversationStore,
  ref: string,
  openedAs: string,
  at: TurnPoint,
): Promise<void> {
  if (openedAs === ref || (await store.exists(ref))) return;
  const earlier = await store.load(openedAs);
  await store.save(conversationAt(earlier, ref, at));
}

/**
 * The conversation as it was at `at`: the steps before it, and the answers of the calls that had
 * run by then. A step's calls run in order before the next step is asked, so before step k every
 * call of the steps before k has run; at call c of step k, so have the calls of step k listed
 * before c, and the answers the step itself wrote (a refused or finishing call).
 */
export function conversationAt(conversation: Conversation, ref: string, at: TurnPoint): Conversation {
  const assistants = conversation.entries.flatMap((entry, index) =>
    entry.kind === 'assistant' ? [index] : [],
  );
  let keptSteps = 'step' in at ? at.step : 0;
  // The calls of the point's step that had not run yet: this one and those after it.
  let notRun = new Set<string>();
  if ('call' in at) {
    const step = conversation.steps.findIndex((s) => s.toolCalls.some((c) => c.id === at.call));
    if (step < 0) throw new Error(`tool call ${at.call} is not part of ${conversation.ref}`);
    keptSteps = step + 1;
    const order = conversation.steps[step]!.toolCalls.map((c) => c.id);
    notRun = new Set(order.slice(order.indexOf(at.call)));
  }
  const entries = conversation.entries.slice(0, assistants[keptSteps] ?? conversation.entries.length);
  const answered = new Set(
    entries
      .flatMap((entry) => (entry.kind === 'assistant' ? entry.toolCalls.map((c) => c.id) : []))
      .filter((id) => !notRun.has(id)),
  );
  const keep = <T>(record: Record<string, T> | undefined) =>
    Object.fromEntries(Object.entries(record ?? {}).filter(([id]) => answered.has(id)));
  const taken: Conversation = {
    ...conversation,
    ref,
    entries,
    steps: conversation.steps.slice(0, keptSteps),
    toolResults: keep(conversation.toolResults),
  };
  const commits = keep(conversation.toolCommits);
  if (Object.keys(commits).length > 0) taken.toolCommits = commits;
  else delete taken.toolCommits;
  return taken;
}
