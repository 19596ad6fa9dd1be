import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { DEFAULT_RUN_OPTIONS, type RunInput, type RunOptions } from '../shared/run-types';
import type { Language } from '../shared/types';

/**
 * A scenario is data: what each agent answers, turn by turn and step by step.
 * Faults are part of a step, so a test can say "the second Coder call gets a 429
 * once, then its answer".
 */
const faultSchema = z.strictObject({
  status: z.number().int().min(400).max(599).optional(),
  retryAfter: z.number().min(0).optional(),
  drop: z.boolean().optional(),
  delayMs: z.number().int().min(0).optional(),
  message: z.string().optional(),
  /** How many requests of this same conversation get the fault before the answer is served. */
  times: z.number().int().min(1).optional(),
  always: z.boolean().optional(),
  /**
   * Sends this many chunks of a streamed answer, then nothing more, with the connection left
   * open: a stream gone silent. A non-streaming request gets no answer at all.
   */
  stallAfterChunks: z.number().int().min(0).optional(),
});

const scriptedToolCallSchema = z.strictObject({
  name: z.string(),
  /** An object is sent as JSON; a string is sent as is, which lets a scenario send broken JSON. */
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]),
});

export const scenarioStepSchema = z.strictObject({
  content: z.string().optional(),
  tool_calls: z.array(scriptedToolCallSchema).optional(),
  /**
   * `length`: the answer hit its output limit. The last call's arguments (given as an object) are
   * sent cut to half their JSON, as a real cut answer ends mid-call; a string is sent as written.
   */
  finish_reason: z.literal('length').optional(),
  /**
   * The calls are written into `content` instead of `tool_calls`, as local servers without a tool
   * parser answer: one bare JSON object (or an array), ```json fences, or <tool_call> tags.
   */
  tool_calls_as_text: z.enum(['json', 'fenced', 'tags']).optional(),
  /**
   * A server whose context holds this many characters of messages: a longer request is answered
   * 400 `context_length_exceeded` (OpenAI's body), a shorter one gets the step's answer.
   */
  context_limit_chars: z.number().int().positive().optional(),
  delayMs: z.number().int().min(0).optional(),
  /** When the request streams: the pause before each chunk after the first, a generation that takes its time. */
  chunkDelayMs: z.number().int().min(0).optional(),
  fault: faultSchema.optional(),
  /** Reported usage; `cached` and `reasoning` appear as the prompt and completion token details. */
  usage: z
    .strictObject({
      prompt: z.number().int().optional(),
      completion: z.number().int().optional(),
      cached: z.number().int().min(0).optional(),
      reasoning: z.number().int().min(0).optional(),
    })
    .optional(),
});

const turnsSchema = z.array(z.array(scenarioStepSchema));

export const scenarioSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  /** The task a demo or test starts with this scenario. */
  task: z.string().optional(),
  language: z.enum(['python', 'typescript', 'javascript']).optional(),
  /** A scenario answers any request whose task contains this text (when not chosen by model name). */
  match: z.string().optional(),
  /** A server that refuses `tool_choice` with a 400, as llama.cpp and some vLLM versions do. */
  rejects_tool_choice: z.boolean().optional(),
  /** Acceptance tests to pass with `--tests`, as path -> content. */
  acceptanceTests: z.record(z.string(), z.string()).optional(),
  agents: z.strictObject({
    planner: turnsSchema.optional(),
    coder: turnsSchema.optional(),
    tester: turnsSchema.optional(),
    reflector: turnsSchema.optional(),
  }),
});

export type Scenario = z.infer<typeof scenarioSchema>;
export type ScenarioStep = z.infer<typeof scenarioStepSchema>;

/** The project's own scenarios folder, found from either src/ or dist/. */
export const BUILTIN_SCENARIOS_DIR = path.resolve(__dirname, '..', '..', 'scenarios');

export function parseScenario(value: unknown, source: string): Scenario {
  const parsed = scenarioSchema.safeParse(value);
  if (!parsed.success) {
    throw new Error(
      `scenario ${source} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}

export function loadScenarioFile(file: string): Scenario {
  return parseScenario(JSON.parse(fs.readFileSync(file, 'utf8')), file);
}

export function loadScenarios(dir: string = BUILTIN_SCENARIOS_DIR): Scenario[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => loadScenarioFile(path.join(dir, name)));
}

export function loadBuiltinScenario(name: string): Scenario {
  const found = loadScenarios().find((s) => s.name === name);
  if (!found) throw new Error(`no built-in scenario named "${name}"`);
  return found;
}

/** The run input that replays `scenario` on the scripted model; the task and language default to the scenario's. */
export function scriptedRunInput(
  scenario: Scenario,
  overrides: {
    task?: string;
    language?: Language;
    testsDir?: string | null;
    options?: Partial<RunOptions>;
    /** A folder on the host that prepares the run; absent: that host decides. */
    workspace?: string;
  } = {},
): RunInput {
  return {
    task: overrides.task ?? scenario.task ?? scenario.name,
    language: overrides.language ?? scenario.language ?? 'python',
    ...(overrides.workspace ? { workspace: overrides.workspace } : {}),
    testsDir: overrides.testsDir ?? null,
    model: `scripted:${scenario.name}`,
    options: { ...DEFAULT_RUN_OPTIONS, ...overrides.options },
    repo: null,
    testCommand: null,
    setupCommand: null,
    setupNetwork: false,
    link: null,
  };
}
