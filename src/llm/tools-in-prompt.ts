import type OpenAI from 'openai';

type Message = OpenAI.Chat.ChatCompletionMessageParam;

/**
 * The messages for a server that takes no tool definitions: a system message first that lists the
 * tools and says how to call one in text, in the form parseTextToolCalls reads; earlier calls and
 * their answers as text too, since such a server's template may drop `tool_calls` and `tool` turns.
 */
export function withToolsInPrompt(messages: Message[], tools: OpenAI.Chat.ChatCompletionTool[]): Message[] {
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
    'Each call is answered in the next message, in a <tool_response> block.',
    `The tools, with JSON schemas of their arguments: ${JSON.stringify(listing)}`,
  ].join('\n');
  const names = new Map<string, string>();
  const asText = messages.map((message): Message => {
    if (message.role === 'assistant' && message.tool_calls?.length) {
      const tags = message.tool_calls.flatMap((call) => {
        if (call.type !== 'function') return [];
        names.set(call.id, call.function.name);
        const args = call.function.arguments.trim() || '{}';
        return [
          `<tool_call>{"name": ${JSON.stringify(call.function.name)}, "arguments": ${args}}</tool_call>`,
        ];
      });
      const said = typeof message.content === 'string' ? message.content : '';
      return { role: 'assistant', content: [said, ...tags].filter(Boolean).join('\n') };
    }
    if (message.role === 'tool') {
      const text =
        typeof message.content === 'string'
          ? message.content
          : message.content.map((part) => part.text).join('');
      const name = JSON.stringify(names.get(message.tool_call_id) ?? 'tool');
      return { role: 'user', content: `<tool_response name=${name}>\n${text}\n</tool_response>` };
    }
    return message;
  });
  return [{ role: 'system', content: note }, ...asText];
}
