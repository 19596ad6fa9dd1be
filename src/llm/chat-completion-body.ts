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
  usage: { prompt: number; completion: number; cached?: number; reasoning?: number };
  finishReason?: string;
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
        finish_reason: answer.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
      ...(usage.cached !== undefined ? { prompt_tokens_details: { cached_tokens: usage.cached } } : {}),
      ...(usage.reasoning !== undefined
        ? { completion_tokens_details: { reasoning_tokens: usage.reasoning } }
        : {}),
    },
  };
}

export function errorBody(message: string, type = 'invalid_request_error', code?: string, param?: string) {
  return { error: { message, type, ...(param ? { param } : {}), ...(code ? { code } : {}) } };
}

/** OpenAI's answer to a request longer than the model's context. */
export function contextLengthBody(limitTokens: number, requestedTokens: number) {
  return errorBody(
    `This model's maximum context length is ${limitTokens} tokens. However, your messages resulted in ${requestedTokens} tokens. Please reduce the length of the messages.`,
    'invalid_request_error',
    'context_length_exceeded',
    'messages',
  );
}
