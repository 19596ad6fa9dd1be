/** The JSON bodies an OpenAI-compatible endpoint answers with, as the scripted model builds them. */

export interface ScriptedToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export function completionBody(answer: {
  seq: number;
  model: string;
  content: string | null;
  toolCalls: ScriptedToolCall[];
  usage: { prompt: number; completion: number };
}) {
  const { toolCalls, usage } = answer;
  return {
    id: `chatcmpl-scripted-${answer.seq}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.content,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  };
}

export function errorBody(message: string, type = 'invalid_request_error') {
  return { error: { message, type } };
}
