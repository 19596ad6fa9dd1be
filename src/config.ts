import * as os from 'node:os';
import * as path from 'node:path';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import { z } from 'zod';
import type { SandboxMode } from './shared/types';
import { DEFAULT_LIMIT_MAXIMUMS, LIMIT_MAXIMUM_RANGES, type LimitMaximums } from './shared/limit-maximums';
import { UserInputError } from './shared/errors';
import { parseModelOptionsFile, type ModelOptionsTable } from './llm/model-options';
import { parseGitStoreLocation, type GitStoreLocation } from './repo';
import { readLocalStackRecord } from './temporal/local-stack-record';

export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export type AcaLogLevel = (typeof LOG_LEVELS)[number];

/** How to reach Temporal: what both the client's Connection and the worker's NativeConnection take. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/**
 * Everything `aca` reads from the environment (docs/contract.md, section 2), validated once with
 * zod; no other module reads the environment (programLookup and userEnvironment below are the
 * two reads made at call time). Holds secrets (API keys): never log it.
 */
export interface AcaConfig {
  temporalAddress: string;
  /** Whether TEMPORAL_ADDRESS or a config profile named the address (else the default is used). */
  temporalAddressConfigured: boolean;
  namespace: string;
  /** Address, TLS client certificate and key, API key: from TEMPORAL_* variables or a config profile. */
  temporalConnection: TemporalConnectionOptions;
  taskQueue: string;
  databaseUrl: string | null;
  openaiBaseUrl: string | undefined;
  openaiApiKey: string | undefined;
  model: string;
  /** ACA_MODEL_OPTIONS: the file it names, parsed; empty when unset. */
  modelOptions: ModelOptionsTable;
  /** ACA_LOG_LEVEL; undefined when unset, so each command keeps its own default. */
  logLevel: AcaLogLevel | undefined;
  home: string;
  workspacesRoot: string;
  sandbox: SandboxMode;
  metricsPort: number | null;
  /** Sandboxed test runs a worker runs at once (ACA_TEST_SLOTS; default max(2, CPUs)). */
  testSlots: number;
  /**
   * ACA_HOST_START_TIMEOUT (seconds, default 60): how long a step of a run's host may wait to
   * start before, with a git store, another host adopts the run. Recorded by the preparing host.
   */
  hostStartTimeoutMs: number;
  /**
   * ACA_HEARTBEAT_TIMEOUT (seconds; unset: each kind of step keeps its own, 20 to 30 s): how long
   * a run's step may go without a heartbeat before another worker is given it. Recorded by the
   * preparing host.
   */
  heartbeatTimeoutMs: number | null;
  /**
   * Runs whose workflow state a worker keeps in memory between steps (ACA_CACHED_RUNS; null: the
   * SDK's default). 0 sends every workflow task of a run to whichever worker polls first.
   */
  cachedRuns: number | null;
  /**
   * ACA_WORKFLOW_BUNDLE: a workflow bundle built beforehand (bundleWorkflowCode of this same
   * version), which a worker loads instead of bundling the workflow code at every start; null:
   * the worker bundles it.
   */
  workflowBundleFile: string | null;
  logPrompts: boolean;
  /**
   * Base address of the Temporal Web UI, for links: ACA_UI_URL, else the UI of the server `aca up`
   * or `aca demo` started at this address for this home, else port 8233 of the server's host.
   */
  uiUrl: string;
  /** The author and committer of runs' commits (ACA_GIT_AUTHOR_NAME, ACA_GIT_AUTHOR_EMAIL). */
  gitAuthor: { name: string; email: string };
  /** ACA_PRICES: a JSON file of model prices over the built-in table (see llm/model-prices.ts). */
  pricesFile: string | null;
  /**
   * ACA_MCP_CONFIG: the JSON file of the MCP servers this worker starts and offers agents (see
   * src/mcp/mcp-config.ts); read when a worker starts, null when unset.
   */
  mcpConfigFile: string | null;
  /** ACA_GIT_STORE: where runs' branches are kept for every worker (default `$ACA_HOME/store.git`). */
  gitStore: GitStoreLocation;
  /**
   * The most a run's test limits may be (ACA_MAX_WALL_SECONDS, ACA_MAX_CPU_SECONDS,
   * ACA_MAX_MEMORY_MIB): `aca run` refuses an `.aca.json` above them, a worker holds any run to them.
   */
  limitMaximums: LimitMaximums;
  /** ACA_RUN_COMMAND (`on` by default): whether this worker offers the agents `run_command`. */
  runCommand: boolean;
}

export const DEFAULT_MODEL = 'gpt-4o-mini';

/**
 * A whole number in [low, high] written as digits (surrounding spaces allowed); `what` is how the
 * error describes the range.
 */
function wholeNumber(
  variable: string,
  low: number,
  high: number,
  what = `a whole number from ${low} to ${high}`,
) {
  return z.string().transform((text, ctx) => {
    const value = Number(text.trim());
    if (!/^\d+$/.test(text.trim()) || value < low || value > high) {
      ctx.addIssue({ code: 'custom', message: `${variable} must be ${what}, got "${text}"` });
      return z.NEVER;
    }
    return value;
  });
}

/** One of `values` once `normalize`d; `what` is how the error lists them. */
function oneOf<const T extends string>(
  variable: string,
  values: readonly T[],
  normalize: (text: string) => string,
  what: string,
) {
  return z.string().transform((text, ctx) => {
    const value = values.find((candidate) => candidate === normalize(text));
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', message: `${variable} must be ${what}, got "${text}"` });
      return z.NEVER;
    }
    return value;
  });
}

/** A name git takes in an identity: git refuses these, and better at start than at the first commit. */
function identityPart(variable: string) {
  return z
    .string()
    .transform((text) => text.trim())
    .refine((text) => text !== '' && !/[<>\n\0]/.test(text), {
      error: (issue) =>
        `${variable} must be non-empty and free of <, > and line breaks, got "${String(issue.input)}"`,
    });
}

const [WALL_LOW, WALL_HIGH] = LIMIT_MAXIMUM_RANGES.wallSeconds;
const [CPU_LOW, CPU_HIGH] = LIMIT_MAXIMUM_RANGES.cpuSeconds;
const [MEMORY_LOW, MEMORY_HIGH] = LIMIT_MAXIMUM_RANGES.memoryMiB;

/**
 * The variables aca reads itself, each optional: an empty variable counts as unset, except the git
 * identity, where an empty name is an error. Temporal's own variables go to @temporalio/envconfig.
 */
const environmentSchema = z.object({
  ACA_HOME: z.string().optional(),
  ACA_WORKSPACES: z.string().optional(),
  // Checked where it is used (src/sandbox/launch/sandbox-user.ts), against the uid range it lives in.
  ACA_SANDBOX_UIDS: z.string().optional(),
  ACA_SANDBOX: oneOf(
    'ACA_SANDBOX',
    ['bwrap', 'none'] as const,
    (text) => text.trim(),
    '"bwrap" or "none"',
  ).optional(),
  ACA_METRICS_PORT: wholeNumber('ACA_METRICS_PORT', 0, 65535, 'a port number').optional(),
  ACA_TEST_SLOTS: wholeNumber('ACA_TEST_SLOTS', 1, 256).optional(),
  ACA_HOST_START_TIMEOUT: wholeNumber(
    'ACA_HOST_START_TIMEOUT',
    1,
    86_400,
    'a whole number of seconds from 1 to 86400',
  ).optional(),
  ACA_HEARTBEAT_TIMEOUT: wholeNumber(
    'ACA_HEARTBEAT_TIMEOUT',
    1,
    3_600,
    'a whole number of seconds from 1 to 3600',
  ).optional(),
  ACA_CACHED_RUNS: wholeNumber('ACA_CACHED_RUNS', 0, 100_000).optional(),
  ACA_WORKFLOW_BUNDLE: z.string().optional(),
  ACA_LOG_LEVEL: oneOf(
    'ACA_LOG_LEVEL',
    LOG_LEVELS,
    (text) => text.trim().toUpperCase(),
    `one of ${LOG_LEVELS.join(', ')}`,
  ).optional(),
  ACA_MAX_WALL_SECONDS: wholeNumber('ACA_MAX_WALL_SECONDS', WALL_LOW, WALL_HIGH).optional(),
  ACA_MAX_CPU_SECONDS: wholeNumber('ACA_MAX_CPU_SECONDS', CPU_LOW, CPU_HIGH).optional(),
  ACA_MAX_MEMORY_MIB: wholeNumber('ACA_MAX_MEMORY_MIB', MEMORY_LOW, MEMORY_HIGH).optional(),
  ACA_TASK_QUEUE: z.string().optional(),
  DATABASE_URL: z.string().optional(),
  OPENAI_BASE_URL: z.string().optional(),
  OPENAI_API_KEY: z.string().optional(),
  ACA_MODEL: z.string().optional(),
  ACA_MODEL_OPTIONS: z.string().optional(),
  ACA_LOG_PROMPTS: z.string().optional(),
  ACA_RUN_COMMAND: oneOf(
    'ACA_RUN_COMMAND',
    ['on', 'off'] as const,
    (text) => text.trim().toLowerCase(),
    '"on" or "off"',
  ).optional(),
  ACA_UI_URL: z.string().optional(),
  ACA_PRICES: z.string().optional(),
  ACA_MCP_CONFIG: z.string().optional(),
  ACA_GIT_STORE: z.string().optional(),
  ACA_GIT_AUTHOR_NAME: identityPart('ACA_GIT_AUTHOR_NAME').optional(),
  ACA_GIT_AUTHOR_EMAIL: identityPart('ACA_GIT_AUTHOR_EMAIL').optional(),
  SSH_AUTH_SOCK: z.string().optional(),
});

type Environment = z.infer<typeof environmentSchema>;

/** The names of the variables aca reads itself (Temporal's: TEMPORAL_ENV_VARIABLES). */
export const ACA_ENV_VARIABLES = Object.keys(environmentSchema.shape) as ReadonlyArray<keyof Environment>;

/** The environment with every empty variable dropped (but the git identity's, see above). */
function setVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const keepEmpty = new Set(['ACA_GIT_AUTHOR_NAME', 'ACA_GIT_AUTHOR_EMAIL']);
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] =>
        typeof entry[1] === 'string' && (entry[1].trim() !== '' || keepEmpty.has(entry[0])),
    ),
  );
}

/** `machine` is what the defaults depend on besides the environment (tests pass fixed values). */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  machine: { cpuCount: number } = { cpuCount: os.availableParallelism() },
): AcaConfig {
  const parsed = environmentSchema.safeParse(setVariables(env));
  if (!parsed.success) throw new UserInputError(parsed.error.issues[0].message);
  const vars = parsed.data;
  const home = path.resolve(vars.ACA_HOME ?? path.join(os.homedir(), '.aca'));
  const temporal = loadTemporalSettings(env);
  // Without TEMPORAL_ADDRESS, the server `aca up` or `aca demo` last started for this home, on
  // whatever ports they were given; links go to that server's Web UI unless ACA_UI_URL says.
  const localStack = readLocalStackRecord(home);
  const temporalAddress = temporal.connectionOptions.address || localStack?.address || '127.0.0.1:7233';
  const temporalHost = temporalAddress.replace(/:\d+$/, '');
  const localUi = localStack?.address === temporalAddress ? localStack.uiUrl : null;
  return {
    temporalAddress,
    temporalAddressConfigured: Boolean(temporal.connectionOptions.address),
    namespace: temporal.namespace || 'default',
    temporalConnection: {
      address: temporalAddress,
      ...(temporal.connectionOptions.tls != null ? { tls: temporal.connectionOptions.tls } : {}),
      ...(temporal.connectionOptions.apiKey ? { apiKey: String(temporal.connectionOptions.apiKey) } : {}),
      ...(temporal.connectionOptions.metadata
        ? { metadata: temporal.connectionOptions.metadata as Record<string, string> }
        : {}),
    },
    taskQueue: vars.ACA_TASK_QUEUE ?? 'coding-agent',
    databaseUrl: vars.DATABASE_URL ?? null,
    openaiBaseUrl: vars.OPENAI_BASE_URL,
    openaiApiKey: vars.OPENAI_API_KEY,
    model: vars.ACA_MODEL ?? DEFAULT_MODEL,
    modelOptions: vars.ACA_MODEL_OPTIONS
      ? parseModelOptionsFile(path.resolve(vars.ACA_MODEL_OPTIONS.trim()))
      : {},
    logLevel: vars.ACA_LOG_LEVEL,
    home,
    workspacesRoot: path.resolve(vars.ACA_WORKSPACES ?? path.join(home, 'workspaces')),
    sandbox: vars.ACA_SANDBOX ?? 'bwrap',
    metricsPort: vars.ACA_METRICS_PORT ?? null,
    testSlots: vars.ACA_TEST_SLOTS ?? Math.max(2, machine.cpuCount),
    hostStartTimeoutMs: (vars.ACA_HOST_START_TIMEOUT ?? 60) * 1000,
    heartbeatTimeoutMs: vars.ACA_HEARTBEAT_TIMEOUT === undefined ? null : vars.ACA_HEARTBEAT_TIMEOUT * 1000,
    cachedRuns: vars.ACA_CACHED_RUNS ?? null,
    workflowBundleFile: vars.ACA_WORKFLOW_BUNDLE ? path.resolve(vars.ACA_WORKFLOW_BUNDLE.trim()) : null,
    logPrompts: vars.ACA_LOG_PROMPTS === '1' || vars.ACA_LOG_PROMPTS === 'true',
    uiUrl: (vars.ACA_UI_URL ?? localUi ?? `http://${temporalHost}:8233`).replace(/\/$/, ''),
    gitAuthor: {
      name: vars.ACA_GIT_AUTHOR_NAME ?? 'aca',
      email: vars.ACA_GIT_AUTHOR_EMAIL ?? 'aca@localhost',
    },
    pricesFile: vars.ACA_PRICES ? path.resolve(vars.ACA_PRICES) : null,
    mcpConfigFile: vars.ACA_MCP_CONFIG ? path.resolve(vars.ACA_MCP_CONFIG.trim()) : null,
    gitStore: gitStoreOf(vars, home),
    limitMaximums: {
      wallSeconds: vars.ACA_MAX_WALL_SECONDS ?? DEFAULT_LIMIT_MAXIMUMS.wallSeconds,
      cpuSeconds: vars.ACA_MAX_CPU_SECONDS ?? DEFAULT_LIMIT_MAXIMUMS.cpuSeconds,
      memoryMiB: vars.ACA_MAX_MEMORY_MIB ?? DEFAULT_LIMIT_MAXIMUMS.memoryMiB,
    },
    runCommand: vars.ACA_RUN_COMMAND !== 'off',
  };
}

function gitStoreOf(vars: Environment, home: string): GitStoreLocation {
  const store = parseGitStoreLocation(vars.ACA_GIT_STORE, home);
  return store.scheme === 'ssh' && vars.SSH_AUTH_SOCK
    ? { ...store, sshAgentSocket: vars.SSH_AUTH_SOCK }
    : store;
}

/**
 * What finding a host program reads from the environment. Read at each call, not once: an install
 * (aca demo's apt-get) or a test may change PATH while the process runs.
 */
export interface ProgramLookup {
  /** PATH. */
  searchPath: string;
  /** TEMPORAL_CLI: the Temporal CLI binary to use, if set. */
  temporalCli: string | undefined;
  /** Where user caches live (XDG_CACHE_HOME, default ~/.cache). */
  cacheHome: string;
}

export function programLookup(env: NodeJS.ProcessEnv = process.env): ProgramLookup {
  return {
    searchPath: env.PATH ?? '',
    temporalCli: env.TEMPORAL_CLI || undefined,
    cacheHome: env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'),
  };
}

/** ACA_SANDBOX_UIDS ("first-last"): the part of the sandbox uid range this process picks from. */
export function sandboxUidsSetting(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.ACA_SANDBOX_UIDS?.trim() || undefined;
}

/**
 * The environment for a child process that works for the user rather than for a run (`go install`
 * of the Temporal CLI): the user's own, with `extra` on top. A run's processes never get it.
 */
export function userEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}

/** The variables @temporalio/envconfig reads (TEMPORAL_GRPC_META_* adds gRPC headers too). */
export const TEMPORAL_ENV_VARIABLES = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_PROFILE',
  'TEMPORAL_CONFIG_FILE',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
] as const;

/**
 * Temporal's own environment configuration: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 * TEMPORAL_TLS*, and a profile (TEMPORAL_PROFILE) of the Temporal config file (TEMPORAL_CONFIG_FILE,
 * by default temporal.toml in the user's config folder), as the Temporal CLI and SDKs read them.
 */
function loadTemporalSettings(env: NodeJS.ProcessEnv) {
  const vars = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  try {
    return loadClientConnectConfig({ overrideEnvVars: vars });
  } catch (err) {
    throw new UserInputError(`the Temporal connection settings cannot be read: ${(err as Error).message}`);
  }
}
