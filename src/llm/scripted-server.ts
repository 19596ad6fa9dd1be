import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DOCTOR_PROBE_TOOL, SCRIPTED_MODEL_OWNER } from '../shared/model-markers';
import { completionBody, completionChunks, contextLengthBody, errorBody } from './chat-completion-body';
import type { AgentRole } from '../shared/types';
import { loadScenarios, parseScenario, type Scenario, type ScenarioStep } from './scenario';
import { plannedAnswer } from './scripted-answer';

/** One request as the scripted server saw it; tests assert on these. */
export interface RecordedRequest {
  seq: number;
  at: string;
  scenario: string | null;
  agent: AgentRole | null;
  turn: number;
  step: number;
  /** Same conversation prefix => same key: a repeated completed call shows up as a repeated key. */
  key: string;
  model: string;
  tools: string[];
  messages: Array<{ role: string; content: unknown }>;
  /** The request's other parameters (tool_choice, max_completion_tokens, temperature, …). */
  params: Record<string, unknown>;
  /** Characters of the messages as sent, what a scenario's context_limit_chars is checked against. */
  chars: number;
  /** 'pending' until answered; 'dropped' when the connection closed before an answer. */
  status: number | 'pending' | 'dropped';
  usage: { prompt: number; completion: number } | null;
}

export interface ScriptedServerOptions {
  port?: number;
  host?: string;
  scenarios?: Scenario[];
  /** Extra delay before every answer, for benchmarks. */
  delayMs?: number;
}

interface ChatBody {
  model?: string;
  messages?: Array<{ role: string; content?: unknown; tool_calls?: unknown }>;
  tools?: Array<{ type: string; function?: { name?: string } }>;
  [param: string]: unknown;
}

const TURN_PATTERNS: Record<AgentRole, RegExp | null> = {
  planner: null,
  coder: /coding attempt (\d+)/,
  tester: /test-writing pass (\d+)/,
  reflector: /failed test run of attempt (\d+)/,
};

/** The agent is known by the tools it is offered (docs/contract.md, section 3). */
export function identifyAgent(tools: string[]): AgentRole | null {
  if (tools.includes('submit_plan')) return 'planner';
  if (tools.includes('submit_analysis')) return 'reflector';
  if (tools.includes('delete_file')) return 'coder';
  if (tools.includes('finish') && tools.includes('create_file')) return 'tester';
  return null;
}

const estimateTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/**
 * An OpenAI-compatible Chat Completions server that replays scenarios. It is
 * stateless about call order: the agent comes from the tools offered, the turn
 * from the user message and the step from the number of assistant messages, so
 * retries and crashed workers get the same answer a live model would be asked for.
 */
export class ScriptedLlmServer {
  readonly requests: RecordedRequest[] = [];
  private readonly scenarios = new Map<string, Scenario>();
  private readonly faultsServed = new Map<string, number>();
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();
  private delayMs: number;

  constructor(private readonly options: ScriptedServerOptions = {}) {
    for (const scenario of options.scenarios ?? loadScenarios()) this.addScenario(scenario);
    this.delayMs = options.delayMs ?? 0;
  }

  addScenario(scenario: Scenario): void {
    this.scenarios.set(scenario.name, parseScenario(scenario, scenario.name));
  }

  setDelay(ms: number): void {
    this.delayMs = ms;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('the scripted server is not listening');
    return `http://${this.options.host ?? '127.0.0.1'}:${address.port}/v1`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err), type: 'server_error' } }));
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  /** Requests of one conversation key: more than one completed answer means a model call was repeated. */
  completedCallsByKey(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of this.requests) if (r.status === 200) counts.set(r.key, (counts.get(r.key) ?? 0) + 1);
    return counts;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const arrived = performance.now();
    const url = req.url ?? '';
    if (req.method === 'GET' && url.startsWith('/_scripted/requests')) {
      return this.json(res, 200, this.requests);
    }
    if (req.method === 'GET' && (url === '/v1/models' || url === '/models')) {
      // Runs name a scenario as `scripted:<name>`; both spellings are offered, marked as aca's.
      return this.json(res, 200, {
        object: 'list',
        data: [...this.scenarios.keys()].flatMap((name) =>
          [name, `scripted:${name}`].map((id) => ({ id, object: 'model', owned_by: SCRIPTED_MODEL_OWNER })),
        ),
      });
    }
    if (req.method !== 'POST' || !/\/chat\/completions$/.test(url)) {
      return this.json(res, 404, errorBody(`no route ${req.method} ${url}`));
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: ChatBody;
    try {
      body = JSON.parse(raw) as ChatBody;
    } catch {
      return this.json(res, 400, errorBody('request body is not JSON'));
    }
    const { messages = [], model = '', tools: _tools, ...params } = body;
    const tools = (body.tools ?? []).map((t) => t.function?.name ?? '').filter(Boolean);
    const agent = identifyAgent(tools);
    const firstUser = messages.find((m) => m.role === 'user');
    const userText = typeof firstUser?.content === 'string' ? firstUser.content : '';
    const scenario = this.chooseScenario(model, userText);
    const pattern = agent ? TURN_PATTERNS[agent] : null;
    const turn = pattern ? Math.max(0, Number(pattern.exec(userText)?.[1] ?? '1') - 1) : 0;
    const step = messages.filter((m) => m.role === 'assistant').length;
    const key = createHash('sha256')
      .update(model)
      .update(JSON.stringify(messages))
      .digest('hex')
      .slice(0, 16);
    const record: RecordedRequest = {
      seq: this.requests.length + 1,
      at: new Date().toISOString(),
      scenario: scenario?.name ?? null,
      agent,
      turn,
      step,
      key,
      model,
      tools,
      messages: messages.map((m) => ({ role: m.role, content: m.content ?? null })),
      params,
      chars: JSON.stringify(messages).length,
      status: 'pending',
      usage: null,
    };
    this.requests.push(record);
    res.on('close', () => {
      if (record.status === 'pending') record.status = 'dropped';
    });

    // Before the doctor's probe too: `aca doctor` must meet the same server the agents do.
    if (scenario?.rejects_tool_choice && params.tool_choice !== undefined) {
      record.status = 400;
      return this.json(res, 400, errorBody('tool_choice is not supported by this server'));
    }
    if (scenario && tools.includes(DOCTOR_PROBE_TOOL)) {
      record.status = 200;
      record.usage = { prompt: 1, completion: 1 };
      return this.json(
        res,
        200,
        completionBody({
          seq: record.seq,
          model,
          content: null,
          toolCalls: [
            {
              id: 'call_doctor',
              type: 'function',
              function: { name: DOCTOR_PROBE_TOOL, arguments: '{"ok":true}' },
            },
          ],
          usage: record.usage,
        }),
      );
    }
    if (!scenario) {
      record.status = 400;
      return this.json(res, 400, errorBody(`no scenario matches model "${model}" or the task`));
    }
    if (!agent) {
      record.status = 400;
      return this.json(res, 400, errorBody(`cannot tell the agent from tools [${tools.join(', ')}]`));
    }
    const turns = scenario.agents[agent] ?? [];
    const steps = turns.length ? turns[Math.min(turn, turns.length - 1)] : [];
    const planned: ScenarioStep | undefined = steps[step];

    let stallAfterChunks: number | undefined;
    if (planned?.fault) {
      const fault = planned.fault;
      const served = this.faultsServed.get(key) ?? 0;
      if (fault.always || served < (fault.times ?? 1)) {
        this.faultsServed.set(key, served + 1);
        if (fault.delayMs) await sleep(fault.delayMs);
        stallAfterChunks = fault.stallAfterChunks;
        if (fault.drop) {
          record.status = 'dropped';
          req.socket.destroy();
          return;
        }
        if (fault.status) {
          record.status = fault.status;
          const headers: Record<string, string> = {};
          if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
          return this.json(
            res,
            fault.status,
            errorBody(fault.message ?? `scripted fault ${fault.status}`, 'scripted_fault'),
            headers,
          );
        }
      }
    }
    if (planned?.context_limit_chars !== undefined && record.chars > planned.context_limit_chars) {
      record.status = 400;
      return this.json(
        res,
        400,
        contextLengthBody(
          Math.floor(planned.context_limit_chars / 4),
          estimateTokens(JSON.stringify(messages)),
        ),
      );
    }
    // The delay is the model's whole latency, counted from the request's arrival, so parsing it
    // here is part of d rather than added to it.
    const delay = (planned?.delayMs ?? 0) + this.delayMs - (performance.now() - arrived);
    if (delay > 0) await sleep(delay);
    if (res.destroyed || req.socket.destroyed) {
      record.status = 'dropped';
      return;
    }

    const answer = plannedAnswer(planned, `${agent}_${turn}_${step}`);
    const completionText = JSON.stringify(answer);
    const usage = {
      prompt: planned?.usage?.prompt ?? estimateTokens(JSON.stringify(messages)),
      completion: planned?.usage?.completion ?? estimateTokens(completionText),
    };
    const served = {
      seq: record.seq,
      model,
      ...answer,
      usage: { ...usage, cached: planned?.usage?.cached, reasoning: planned?.usage?.reasoning },
    };
    if (params.stream === true) {
      const options = params.stream_options as { include_usage?: unknown } | undefined;
      const chunks = completionChunks(served, options?.include_usage === true);
      const sent = await this.stream(res, chunks, planned?.chunkDelayMs ?? 0, stallAfterChunks);
      if (sent) {
        record.usage = usage;
        record.status = 200;
      }
      return;
    }
    // A stall without a stream: no answer at all, the connection left open.
    if (stallAfterChunks !== undefined) return;
    record.usage = usage;
    record.status = 200;
    return this.json(res, 200, completionBody(served));
  }

  /**
   * Writes chunks as Server-Sent Events, then `data: [DONE]`. With `stallAfter`, stops after that
   * many chunks and leaves the connection open until the client gives up. True when all was sent.
   */
  private async stream(
    res: http.ServerResponse,
    chunks: unknown[],
    delayMs: number,
    stallAfter: number | undefined,
  ): Promise<boolean> {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    for (const [index, chunk] of chunks.entries()) {
      if (stallAfter !== undefined && index >= stallAfter) return false;
      if (index > 0 && delayMs > 0) await sleep(delayMs);
      if (res.destroyed) return false;
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    }
    if (stallAfter !== undefined) return false;
    res.end('data: [DONE]\n\n');
    return true;
  }

  private chooseScenario(model: string, userText: string): Scenario | undefined {
    const byName = this.scenarios.get(model.replace(/^scripted[:/]/, ''));
    if (byName) return byName;
    for (const scenario of this.scenarios.values()) {
      if (scenario.match && userText.includes(scenario.match)) return scenario;
    }
    return undefined;
  }

  private json(
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  }
}
