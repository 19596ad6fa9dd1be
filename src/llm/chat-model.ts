import OpenAI from 'openai';
import type { TokenUsage } from '../shared/types';
import { rejectsToolChoice, rejectsTools } from './model-errors';
import { DEFAULT_STREAM_IDLE_SECONDS, optionsForModel, type ModelOptionsTable } from './model-options';
import { idleWatch, ModelStreamIdleError, readChatStream, type StreamProgress } from './stream-answer';
import { withToolsInPrompt } from './tools-in-prompt';

export interface ChatRequest {
  model: string;
  messages: OpenAI.Chat.ChatCompletionMessageParam[];
  tools: OpenAI.Chat.ChatCompletionTool[];
  signal?: AbortSignal;
  /**
   * This call's timeout; the model's default otherwise. A streamed call is timed until the server
   * answers; after that only silence (stream_idle_seconds) ends it.
   */
  timeoutMs?: number;
  /** Called as a streamed answer's chunks arrive (never for a non-streaming call). */
  onChunk?: (progress: StreamProgress) => void;
}

export interface ChatAnswer {
  content: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
  usage: TokenUsage;
  /**
   * Whether calls written in `content` count: the model's options say it writes them so
   * (`text_tool_calls`), or the server took no tool definitions for it. Absent: they do not.
   */
  toolCallsInText?: boolean;
}

export interface ChatModel {
  complete(request: ChatRequest): Promise<ChatAnswer>;
  /** The endpoint's address without credentials, for errors that name it. */
  endpoint?: string;
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
  // Models the server took no tools for: they are told the tools in the prompt and call them in text.
  const withoutTools = new Set<string>();
  const warned = new Set<string>();
  return {
    endpoint: endpointForDisplay(client.baseURL),
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
      const body = ({ toolChoice, nativeTools }: Shape) => ({
        model: request.model,
        ...(nativeTools
          ? { messages: request.messages, tools: request.tools }
          : { messages: withToolsInPrompt(request.messages, request.tools) }),
        ...(toolChoice && nativeTools ? { tool_choice: 'auto' as const } : {}),
        ...(perModel.max_completion_tokens !== undefined
          ? { max_completion_tokens: perModel.max_completion_tokens }
          : {}),
        ...(perModel.reasoning_effort !== undefined
          ? { reasoning_effort: perModel.reasoning_effort as OpenAI.ReasoningEffort }
          : {}),
        ...(perModel.temperature !== undefined ? { temperature: perModel.temperature } : {}),
      });
      // An undefined timeout is refused by the client; leaving it out means its default.
      const timing = timeout !== undefined ? { timeout } : {};
      const askWhole = async (shape: Shape): Promise<ChatAnswer> => {
        const response = await client.chat.completions.create(
          { ...body(shape), stream: false },
          { signal: request.signal, ...timing },
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
      };
      const idleSeconds = perModel.stream_idle_seconds ?? DEFAULT_STREAM_IDLE_SECONDS;
      const askStreamed = async (shape: Shape): Promise<ChatAnswer> => {
        // Our own controller, so that silence can end the request as well as cancellation.
        const controller = new AbortController();
        const cancel = () => controller.abort();
        if (request.signal?.aborted) controller.abort();
        request.signal?.addEventListener('abort', cancel, { once: true });
        const idle = idleWatch(idleSeconds * 1000, () => controller.abort());
        try {
          const stream = await client.chat.completions.create(
            { ...body(shape), stream: true, stream_options: { include_usage: true } },
            { signal: controller.signal, ...timing },
          );
          idle.touch();
          const answer = await readChatStream(stream, (progress) => {
            idle.touch();
            request.onChunk?.(progress);
          }).catch((err: unknown) => {
            // The client ends an aborted stream quietly, so the abort's cause is told here.
            if (idle.fired) throw new ModelStreamIdleError(idleSeconds);
            if (request.signal?.aborted) throw new OpenAI.APIUserAbortError();
            throw err;
          });
          // Usage comes only from servers that honour include_usage (OpenAI, vLLM, llama.cpp,
          // Ollama); one that sends none counts the step as 0 tokens, as a non-streaming answer
          // without usage does.
          return { ...answer, usage: usageOf(answer.usage) };
        } finally {
          idle.stop();
          request.signal?.removeEventListener('abort', cancel);
        }
      };
      const ask = perModel.stream === true ? askStreamed : askWhole;
      const shape: Shape = {
        toolChoice: !withoutToolChoice.has(request.model),
        nativeTools: !withoutTools.has(request.model),
      };
      // Each fallback is taken at most once, so this asks at most three times.
      for (;;) {
        try {
          const answer = await ask(shape);
          const inText = perModel.text_tool_calls === true || !shape.nativeTools;
          return inText ? { ...answer, toolCallsInText: true } : answer;
        } catch (err) {
          if (shape.nativeTools && shape.toolChoice && rejectsToolChoice(err)) {
            withoutToolChoice.add(request.model);
            shape.toolChoice = false;
          } else if (shape.nativeTools && request.tools.length > 0 && rejectsTools(err)) {
            withoutTools.add(request.model);
            shape.nativeTools = false;
          } else {
            throw err;
          }
        }
      }
    },
  };
}

/** How a request offers the tools: with `tool_choice`, and as definitions or in the prompt. */
interface Shape {
  toolChoice: boolean;
  nativeTools: boolean;
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

/** An endpoint's address as errors may show it: no user, password, query or fragment. */
export function endpointForDisplay(url: string): string {
  try {
    const shown = new URL(url);
    shown.username = '';
    shown.password = '';
    shown.search = '';
    shown.hash = '';
    return shown.toString().replace(/\/$/, '');
  } catch {
    return 'an address that is not a URL';
  }
}
