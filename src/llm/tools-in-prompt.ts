import type OpenAI from 'openai';

/**
 * The messages for a server that takes no tool definitions: a system message first that lists the
 * tools and says how to call one in text, in the form parseTextToolCalls reads.
 */
export function withToolsInPrompt(
  messages: OpenAI.Chat.ChatCompletionMessageParam[],
  tools: OpenAI.Chat.ChatCompletionTool[],
): OpenAI.Chat.ChatCompletionMessageParam[] {
  const listing = tools.flatMap((tool) =>
    tool.type === 'function'
      ? [
          {
            name: tool.function.name,
            description: tool.function.description ?? '',
            parameters: tool.function.parameters ?? {},
          },
        ]
      : [],
  );
  const note = [
    'You call tools by writing them in your answer: end it with one block per call,',
    '<tool_call>{"name": "<tool name>", "arguments": {<arguments>}}</tool_call>,',
    'and write nothing after the last block. A call anywhere else is not executed.',
    `The tools, with JSON schemas of their arguments: ${JSON.stringify(listing)}`,
  ].join('\n');
  return [{ role: 'system', content: note }, ...messages];
}
