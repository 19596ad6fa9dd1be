import OpenAI from 'openai';
import type { TokenUsage } from '../shared/types';
import { rejectsToolChoice } from './model-errors';
import { optionsForModel, type ModelOptionsTable } from './model-options';

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
  /** Per-model request options (ACA_MODEL_OPTIONS). */
  modelOptions?: ModelOptionsTable;
  /** Where warnings about the endpoint go; each is given once per model. */
  warn?: (message: string) => void;
}

/** Ollama's usual address, or a host named after it. */
const OLLAMA_URL = /:11434(?:\/|$)|ollama/i;

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
  const modelOptions = options.modelOptions ?? {};
  // Servers that refused tool_choice, remembered for the process: asking again would fail again.
  const withoutToolChoice = new Set<string>();
  const warned = new Set<string>();
  return {
    async complete(request) {
      const perModel = optionsForModel(modelOptions, request.model);
      if (options.warn && !warned.has(request.model) && OLLAMA_URL.test(options.baseURL ?? '')) {
        warned.add(request.model);
        if (perModel.context_tokens === undefined) {
          options.warn(
            `Ollama's OpenAI-compatible endpoint ignores num_ctx: "${request.model}" runs with the server's default context (4096 tokens below 24 GiB of VRAM), which silently cuts longer prompts. Start Ollama with OLLAMA_CONTEXT_LENGTH=32768 or more and set context_tokens for this model in ACA_MODEL_OPTIONS.`,
          );
        }
      }
      const timeout = request.timeoutMs ?? options.timeoutMs;
      const ask = (toolChoice: boolean) =>
        client.chat.completions.create(
          {
            model: request.model,
            messages: request.messages,
            tools: request.tools,
            ...(toolChoice ? { tool_choice: 'auto' as const } : {}),
            ...(perModel.max_completion_tokens !== undefined
              ? { max_completion_tokens: perModel.max_completion_tokens }
              : {}),
            ...(perModel.reasoning_effort !== undefined
              ? { reasoning_effort: perModel.reasoning_effort as OpenAI.ReasoningEffort }
              : {}),
            ...(perModel.temperature !== undefined ? { temperature: perModel.temperature } : {}),
            stream: false,
          },
          // An undefined timeout is refused by the client; leaving it out means its default.
          { signal: request.signal, ...(timeout !== undefined ? { timeout } : {}) },
        );
      let response: OpenAI.Chat.ChatCompletion;
      if (withoutToolChoice.has(request.model)) {
        response = await ask(false);
      } else {
        try {
          response = await ask(true);
        } catch (err) {
          if (!rejectsToolChoice(err)) throw err;
          withoutToolChoice.add(request.model);
          response = await ask(false);
        }
      }
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
