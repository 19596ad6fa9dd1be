import OpenAI from 'openai';
import type { TokenUsage } from '../shared/types';

export interface ChatRequest {
  model: string;
  messages: OpenAI.Chat.ChatCompletionMessageParam[];
  tools: OpenAI.Chat.ChatCompletionTool[];
  signal?: AbortSignal;
  /** This call's timeout; the model's default otherwise. */
  timeoutMs?: number;
}

export interface ChatAnswer {
  content: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
  usage: TokenUsage;
}

export interface ChatModel {
  complete(request: ChatRequest): Promise<ChatAnswer>;
}

export interface OpenAIModelOptions {
  baseURL?: string;
  apiKey?: string;
  /** Default timeout of a call (a request's own `timeoutMs` wins). */
  timeoutMs?: number;
}

/**
 * The one place that talks to an OpenAI-compatible endpoint. `maxRetries: 0`
 * because Temporal owns retries: a retry inside the SDK would be invisible to
 * the workflow and could double the time spent on one activity attempt.
 */
export function createOpenAIChatModel(options: OpenAIModelOptions): ChatModel {
  const client = new OpenAI({
    baseURL: options.baseURL,
    // Local servers (the scripted one, Ollama, llama.cpp) accept any key.
    apiKey: options.apiKey || 'no-key-configured',
    maxRetries: 0,
  });
  return {
    async complete(request) {
      const response = await client.chat.completions.create(
        {
          model: request.model,
          messages: request.messages,
          tools: request.tools,
          tool_choice: 'auto',
          stream: false,
        },
        { signal: request.signal, timeout: request.timeoutMs ?? options.timeoutMs },
      );
      const choice = response.choices[0];
      const message = choice?.message;
      const toolCalls = (message?.tool_calls ?? []).flatMap((call) =>
        call.type === 'function'
          ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' }]
          : [],
      );
      return {
        content: message?.content ?? null,
        toolCalls,
        finishReason: choice?.finish_reason ?? null,
        usage: usageOf(response.usage),
      };
    },
  };
}

/** The endpoint's usage; the cached and reasoning details only where the endpoint reports them. */
function usageOf(usage: OpenAI.CompletionUsage | undefined): TokenUsage {
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  return {
    prompt: usage?.prompt_tokens ?? 0,
    completion: usage?.completion_tokens ?? 0,
    ...(typeof cached === 'number' && cached > 0 ? { cached } : {}),
    ...(typeof reasoning === 'number' && reasoning > 0 ? { reasoning } : {}),
  };
}
