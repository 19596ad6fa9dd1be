import type { ScriptedToolCall } from './chat-completion-body';
import type { ScenarioStep } from './scenario';

// What the scripted model answers to one step of a scenario (scripted-server.ts serves it).

/** A cut answer ends half-way through what it was writing. */
const cutHalf = (text: string): string => text.slice(0, Math.ceil(text.length / 2));

/** What a step answers: its calls as `tool_calls` or written into the content, cut when it says so. */
export function plannedAnswer(
  planned: ScenarioStep | undefined,
  idPrefix: string,
): { content: string | null; toolCalls: ScriptedToolCall[]; finishReason?: string } {
  if (!planned) return { content: 'I have nothing more to do.', toolCalls: [] };
  const cut = planned.finish_reason === 'length';
  const calls = (planned.tool_calls ?? []).map((call, i, all) => {
    const written = typeof call.arguments === 'string';
    const args = written ? (call.arguments as string) : JSON.stringify(call.arguments);
    return { name: call.name, arguments: cut && !written && i === all.length - 1 ? cutHalf(args) : args };
  });
  const finishReason = cut ? 'length' : undefined;
  if (planned.tool_calls_as_text) {
    const rendered = renderAsText(planned.tool_calls ?? [], planned.tool_calls_as_text);
    const text = [planned.content, cut ? cutHalf(rendered) : rendered].filter(Boolean).join('\n');
    return { content: text, toolCalls: [], finishReason: finishReason ?? 'stop' };
  }
  return {
    content: planned.content ?? null,
    toolCalls: calls.map((call, i) => ({
      id: `call_${idPrefix}_${i}`,
      type: 'function',
      function: call,
    })),
    finishReason,
  };
}

/** Calls as local models write them when no tool parser turns them into `tool_calls`. */
function renderAsText(
  calls: NonNullable<ScenarioStep['tool_calls']>,
  format: 'json' | 'fenced' | 'tags',
): string {
  // A string's arguments stay a JSON string value, as some templates write them.
  const objects = calls.map((call) => ({ name: call.name, arguments: call.arguments }));
  switch (format) {
    case 'json':
      return JSON.stringify(objects.length === 1 ? objects[0] : objects);
    case 'fenced':
      return objects.map((o) => '```json\n' + JSON.stringify(o, null, 2) + '\n```').join('\n');
    case 'tags':
      return objects.map((o) => `<tool_call>\n${JSON.stringify(o)}\n</tool_call>`).join('\n');
  }
}
