import type OpenAI from 'openai';
import { SystemError } from '../shared/errors';

/** A streamed answer that went silent for longer than the model's stream_idle_seconds. */
export class ModelStreamIdleError extends SystemError {
  constructor(readonly idleSeconds: number) {
    super(`the model's stream sent nothing for ${idleSeconds} s`);
  }
}

/**
 * A stream that ended without a finish_reason: the server or the connection gave up mid-answer.
 * What arrived may end inside a tool call, so none of it is used; the step is tried again.
 */
export class ModelStreamIncompleteError extends SystemError {
  constructor(readonly chunks: number) {
    super(`the model's stream ended after ${chunks} chunks without a finish_reason`);
  }
}

/** How far a stream has come, for heartbeats. */
export interface StreamProgress {
  chunks: number;
  /** Characters of content and tool call arguments received so far. */
  chars: number;
}

export interface StreamedAnswer {
  content: string | null;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string;
  /** Undefined when the server sent no usage (see createOpenAIChatModel). */
  usage: OpenAI.CompletionUsage | undefined;
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Assembles a streamed chat completion into the answer a non-streaming call gives: content and
 * tool calls from the deltas (a call's arguments arrive in pieces, keyed by index), finish_reason
 * from the choice that gives one, usage from whichever chunk carries it (with include_usage, a last
 * chunk without choices). Only the first choice counts, as for a non-streaming answer.
 */
export async function readChatStream(
  stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>,
  onChunk?: (progress: StreamProgress) => void,
): Promise<StreamedAnswer> {
  let content: string | null = null;
  const calls: PartialCall[] = [];
  const byIndex = new Map<number, PartialCall>();
  let finishReason: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  const progress: StreamProgress = { chunks: 0, chars: 0 };
  for await (const chunk of stream) {
    progress.chunks += 1;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    const delta = choice?.delta;
    if (delta?.content) {
      content = (content ?? '') + delta.content;
      progress.chars += delta.content.length;
    }
    for (const piece of delta?.tool_calls ?? []) {
      // Servers that leave out the index send one call after another: a new id starts a new call.
      const index =
        typeof piece.index === 'number'
          ? piece.index
          : piece.id && !calls.some((c) => c.id === piece.id)
            ? calls.length
            : Math.max(0, calls.length - 1);
      let call = byIndex.get(index);
      if (!call) {
        call = { id: '', name: '', arguments: '' };
        byIndex.set(index, call);
        calls.push(call);
      }
      if (piece.id) call.id = piece.id;
      const name = piece.function?.name;
      // Some servers repeat the whole name in every delta; others send it once.
      if (name && name !== call.name) call.name += name;
      const args = piece.function?.arguments;
      if (args) {
        call.arguments += args;
        progress.chars += args.length;
      }
    }
    if (choice?.finish_reason) finishReason = choice.finish_reason;
    onChunk?.(progress);
  }
  if (finishReason === null) throw new ModelStreamIncompleteError(progress.chunks);
  return { content, toolCalls: calls, finishReason, usage };
}

/**
 * Calls `onIdle` once when `touch` has not been called for `ms`. Started by the first touch, so
 * the time until the server answers is left to the request's own timeout.
 */
export function idleWatch(ms: number, onIdle: () => void) {
  let timer: NodeJS.Timeout | undefined;
  let fired = false;
  let stopped = false;
  return {
    touch(): void {
      if (stopped || fired) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        fired = true;
        onIdle();
      }, ms);
    },
    stop(): void {
      stopped = true;
      clearTimeout(timer);
    },
    get fired(): boolean {
      return fired;
    },
  };
}
