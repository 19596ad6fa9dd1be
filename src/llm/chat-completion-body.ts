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

/** Characters of content or arguments per streamed chunk: small, so a call's arguments span several. */
const CHUNK_CHARS = 32;

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += CHUNK_CHARS) out.push(text.slice(at, at + CHUNK_CHARS));
  return out;
}

/**
 * The same answer as `completionBody`, as the `chat.completion.chunk` objects OpenAI streams: the
 * role, the content in pieces, each tool call's id and name then its arguments in pieces (keyed by
 * index), a last chunk with the finish_reason and, when asked with include_usage, a chunk of usage
 * with no choices. Each object is one `data:` line; `data: [DONE]` follows them.
 */
export function completionChunks(
  answer: Parameters<typeof completionBody>[0],
  includeUsage: boolean,
): unknown[] {
  const whole = completionBody(answer);
  const head = { id: whole.id, object: 'chat.completion.chunk', created: whole.created, model: whole.model };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    ...head,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const chunks: unknown[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of pieces(answer.content ?? '')) chunks.push(chunk({ content: piece }));
  answer.toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
        ],
      }),
    );
    for (const piece of pieces(call.function.arguments))
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  chunks.push(chunk({}, whole.choices[0].finish_reason));
  if (includeUsage) chunks.push({ ...head, choices: [], usage: whole.usage });
  return chunks;
}
