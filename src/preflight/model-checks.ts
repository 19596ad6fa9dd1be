/**
 * `aca doctor`'s look at the model endpoint: reachable, key accepted, model offered, function
 * calling supported. It costs one tiny chat request with one tool and a handful of tokens.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import { rejectsToolChoice } from '../llm/model-errors';
import type { CheckResult } from './check-result';

import { DOCTOR_PROBE_TOOL, SCRIPTED_MODEL_OWNER } from '../shared/model-markers';

export { DOCTOR_PROBE_TOOL };

export interface ModelEndpoint {
  baseURL: string | undefined;
  apiKey: string | undefined;
  model: string;
  timeoutMs?: number;
}

/** Fields servers use for a model's context size (vLLM, OpenRouter, Groq, LM Studio, llama.cpp). */
const modelEntry = z
  .object({
    id: z.string(),
    context_length: z.number().optional(),
    context_window: z.number().optional(),
    max_model_len: z.number().optional(),
    max_context_length: z.number().optional(),
    meta: z.object({ n_ctx_train: z.number().optional() }).partial().optional(),
    owned_by: z.string().optional(),
  })
  .passthrough();

type ModelEntry = z.infer<typeof modelEntry>;

function contextSize(entry: ModelEntry): number | undefined {
  return (
    entry.context_length ??
    entry.context_window ??
    entry.max_model_len ??
    entry.max_context_length ??
    entry.meta?.n_ctx_train
  );
}

type Listing =
  | { kind: 'listed'; models: ModelEntry[] }
  | { kind: 'no-listing'; why: string }
  | { kind: 'blocked'; result: CheckResult };

async function listModels(client: OpenAI, where: string): Promise<Listing> {
  try {
    const page = await client.models.list();
    const models = page.data.flatMap((raw) => {
      const parsed = modelEntry.safeParse(raw);
      return parsed.success ? [parsed.data] : [];
    });
    return { kind: 'listed', models };
  } catch (err) {
    if (err instanceof OpenAI.APIConnectionError) {
      return {
        kind: 'blocked',
        result: {
          name: 'model endpoint',
          status: 'unreachable',
          detail: `nothing answers at ${where} (${err.message})`,
          fix: 'check OPENAI_BASE_URL and that the server runs',
        },
      };
    }
    if (err instanceof OpenAI.AuthenticationError || err instanceof OpenAI.PermissionDeniedError) {
      return {
        kind: 'blocked',
        result: {
          name: 'model endpoint',
          status: 'missing',
          detail: `${where} rejected the key (HTTP ${err.status}: ${err.message})`,
          fix: 'set OPENAI_API_KEY to a key this endpoint accepts',
        },
      };
    }
    return { kind: 'no-listing', why: (err as Error).message };
  }
}

type ToolProbe = { ok: true } | { ok: false; status: number | undefined; message: string };

async function probeToolCall(client: OpenAI, model: string): Promise<ToolProbe> {
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    {
      type: 'function',
      function: {
        name: DOCTOR_PROBE_TOOL,
        description: 'Confirms that the model can call tools. Call it with ok set to true.',
        parameters: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
    },
  ];
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'user', content: `Call the ${DOCTOR_PROBE_TOOL} tool with ok=true. Do not answer in text.` },
  ];
  type Limit = { max_tokens: number } | { max_completion_tokens: number };
  const ask = (limit: Limit, toolChoice: boolean) =>
    client.chat.completions.create({
      model,
      messages,
      tools,
      ...(toolChoice ? { tool_choice: 'auto' as const } : {}),
      stream: false,
      ...limit,
    });
  try {
    let limit: Limit = { max_tokens: 64 };
    let toolChoice = true;
    let response: OpenAI.Chat.ChatCompletion | undefined;
    // Each fallback is taken at most once, so this asks at most three times.
    while (!response) {
      try {
        response = await ask(limit, toolChoice);
      } catch (err) {
        // As the agents' model client does: a server that refuses tool_choice is asked without it.
        if (toolChoice && rejectsToolChoice(err)) {
          toolChoice = false;
        } else if (
          // Reasoning models refuse max_tokens and want max_completion_tokens instead.
          'max_tokens' in limit &&
          err instanceof OpenAI.BadRequestError &&
          /max_tokens/.test(err.message)
        ) {
          limit = { max_completion_tokens: 256 };
        } else {
          throw err;
        }
      }
    }
    const calls = response.choices[0]?.message?.tool_calls ?? [];
    if (calls.some((c) => c.type === 'function' && c.function.name === DOCTOR_PROBE_TOOL))
      return { ok: true };
    return {
      ok: false,
      status: 200,
      message: 'the model answered without calling the offered tool',
    };
  } catch (err) {
    if (err instanceof OpenAI.APIError) return { ok: false, status: err.status, message: err.message };
    return { ok: false, status: undefined, message: (err as Error).message };
  }
}

export async function checkModelEndpoint(endpoint: ModelEndpoint): Promise<CheckResult[]> {
  const where = endpoint.baseURL ?? 'https://api.openai.com/v1 (OPENAI_BASE_URL unset)';
  const client = new OpenAI({
    baseURL: endpoint.baseURL,
    apiKey: endpoint.apiKey || 'no-key-configured',
    maxRetries: 0,
    timeout: endpoint.timeoutMs ?? 20_000,
  });
  const listing = await listModels(client, where);
  if (listing.kind === 'blocked') {
    const notTried = 'not tried: the endpoint did not accept a request';
    return [
      listing.result,
      { name: 'model', status: listing.result.status, detail: `${endpoint.model}: ${notTried}` },
      { name: 'tool calling', status: listing.result.status, detail: notTried },
    ];
  }
  if (listing.kind === 'listed' && listing.models.some((m) => m.owned_by === SCRIPTED_MODEL_OWNER)) {
    return checkScriptedModel(client, where, endpoint.model, listing.models);
  }
  const probe = await probeToolCall(client, endpoint.model);
  const results: CheckResult[] = [
    { name: 'model endpoint', status: 'ok', detail: `${where} answers; key accepted` },
  ];

  const entry = listing.kind === 'listed' ? listing.models.find((m) => m.id === endpoint.model) : undefined;
  const context = entry ? contextSize(entry) : undefined;
  const contextNote = context ? `, context ${context} tokens` : '';
  if (!probe.ok && probe.status === 404) {
    results.push({
      name: 'model',
      status: 'missing',
      detail: `${endpoint.model} is not offered here (${probe.message})`,
      fix: `set ACA_MODEL to one of: ${
        listing.kind === 'listed'
          ? listing.models
              .map((m) => m.id)
              .slice(0, 8)
              .join(', ')
          : 'the models this endpoint serves'
      }`,
    });
  } else if (entry) {
    results.push({ name: 'model', status: 'ok', detail: `${endpoint.model} is offered${contextNote}` });
  } else {
    const why =
      listing.kind === 'listed'
        ? "is not in the endpoint's model list"
        : `could not be looked up (${listing.why})`;
    results.push({
      name: 'model',
      status: 'warn',
      detail: `${endpoint.model} ${why}, but the endpoint took a request for it`,
    });
  }

  if (probe.ok) {
    results.push({ name: 'tool calling', status: 'ok', detail: `${endpoint.model} called the offered tool` });
  } else if (probe.status !== 404) {
    results.push({
      name: 'tool calling',
      status: 'missing',
      detail: `${probe.message}${probe.status ? ` (HTTP ${probe.status})` : ''}; aca's agents work only through function calling`,
      fix: 'choose a model and server with OpenAI-style tool calls (for vLLM: --enable-auto-tool-choice and a --tool-call-parser)',
    });
  } else {
    results.push({ name: 'tool calling', status: 'missing', detail: 'not tried: the model is not offered' });
  }
  return results;
}

/**
 * aca's own scripted model (`aca scripted-model`, the demo's): every run names its scenario with
 * `--model scripted:<name>`, so ACA_MODEL naming none is no fault; tool calling is tried with a
 * scenario the server has, since that is what runs will meet.
 */
async function checkScriptedModel(
  client: OpenAI,
  where: string,
  model: string,
  models: ModelEntry[],
): Promise<CheckResult[]> {
  const scenarios = models.map((m) => m.id).filter((id) => id.startsWith('scripted:'));
  const named = scenarios.includes(model) || scenarios.includes(`scripted:${model}`);
  const tried = named ? model : scenarios[0];
  const shown = scenarios.slice(0, 6).join(', ') + (scenarios.length > 6 ? ', …' : '');
  const results: CheckResult[] = [
    {
      name: 'model endpoint',
      status: 'ok',
      detail: `${where} is aca's scripted model (${scenarios.length} scenarios)`,
    },
    named
      ? { name: 'model', status: 'ok', detail: `${model} is one of its scenarios` }
      : {
          name: 'model',
          status: 'warn',
          detail: `${model} is none of its scenarios; a run names one with --model (${shown})`,
        },
  ];
  if (!tried) {
    results.push({
      name: 'tool calling',
      status: 'missing',
      detail: 'not tried: the scripted model has no scenario',
    });
    return results;
  }
  const probe = await probeToolCall(client, tried);
  results.push(
    probe.ok
      ? { name: 'tool calling', status: 'ok', detail: `${tried} called the offered tool` }
      : {
          name: 'tool calling',
          status: 'missing',
          detail: `${probe.message}${probe.status ? ` (HTTP ${probe.status})` : ''}`,
        },
  );
  return results;
}
