import * as os from 'node:os';
import * as path from 'node:path';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import type { SandboxMode } from './shared/types';
import { DEFAULT_LIMIT_MAXIMUMS, LIMIT_MAXIMUM_RANGES, type LimitMaximums } from './sandbox';
import { UserInputError } from './shared/errors';
import { ModelOptionsFileError, parseModelOptionsFile, type ModelOptionsTable } from './llm/model-options';
import {
  GitStoreLocationError,
  parseGitStoreLocation,
  type GitStoreLocation,
} from './repo/git-store-location';

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
 * Everything `aca` reads from the environment (docs/contract.md, section 2), validated once; no
 * other module reads a setting from the environment. Holds secrets (API keys): never log it.
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
   * Runs whose workflow state a worker keeps in memory between steps (ACA_CACHED_RUNS; null: the
   * SDK's default). 0 sends every workflow task of a run to whichever worker polls first.
   */
  cachedRuns: number | null;
  logPrompts: boolean;
  /** Base address of the Temporal Web UI, for links. */
  uiUrl: string;
  /** The author and committer of runs' commits (ACA_GIT_AUTHOR_NAME, ACA_GIT_AUTHOR_EMAIL). */
  gitAuthor: { name: string; email: string };
  /** ACA_PRICES: a JSON file of model prices over the built-in table (see llm/model-prices.ts). */
  pricesFile: string | null;
  /** ACA_GIT_STORE: where runs' branches are kept for every worker (default `$ACA_HOME/store.git`). */
  gitStore: GitStoreLocation;
  /**
   * The most a run's test limits may be (ACA_MAX_WALL_SECONDS, ACA_MAX_CPU_SECONDS,
   * ACA_MAX_MEMORY_MIB): `aca run` refuses an `.aca.json` above them, a worker holds any run to them.
   */
  limitMaximums: LimitMaximums;
}

export const DEFAULT_MODEL = 'gpt-4o-mini';

/** `machine` is what the defaults depend on besides the environment (tests pass fixed values). */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  machine: { cpuCount: number } = { cpuCount: os.availableParallelism() },
): AcaConfig {
  const home = path.resolve(env.ACA_HOME || path.join(os.homedir(), '.aca'));
  const sandbox = (env.ACA_SANDBOX || 'bwrap').trim();
  if (sandbox !== 'bwrap' && sandbox !== 'none') {
    throw new UserInputError(`ACA_SANDBOX must be "bwrap" or "none", got "${sandbox}"`);
  }
  let metricsPort: number | null = null;
  if (env.ACA_METRICS_PORT) {
    metricsPort = Number(env.ACA_METRICS_PORT);
    if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) {
      throw new UserInputError(`ACA_METRICS_PORT must be a port number, got "${env.ACA_METRICS_PORT}"`);
    }
  }
  let testSlots = Math.max(2, machine.cpuCount);
  if (env.ACA_TEST_SLOTS) {
    testSlots = Number(env.ACA_TEST_SLOTS);
    if (!Number.isInteger(testSlots) || testSlots < 1 || testSlots > 256) {
      throw new UserInputError(
        `ACA_TEST_SLOTS must be a whole number from 1 to 256, got "${env.ACA_TEST_SLOTS}"`,
      );
    }
  }
  let hostStartTimeoutMs = 60_000;
  if (env.ACA_HOST_START_TIMEOUT) {
    const seconds = Number(env.ACA_HOST_START_TIMEOUT);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > 86_400) {
      throw new UserInputError(
        `ACA_HOST_START_TIMEOUT must be a whole number of seconds from 1 to 86400, got "${env.ACA_HOST_START_TIMEOUT}"`,
      );
    }
    hostStartTimeoutMs = seconds * 1000;
  }
  let cachedRuns: number | null = null;
  if (env.ACA_CACHED_RUNS) {
    cachedRuns = Number(env.ACA_CACHED_RUNS);
    if (!Number.isInteger(cachedRuns) || cachedRuns < 0 || cachedRuns > 100_000) {
      throw new UserInputError(
        `ACA_CACHED_RUNS must be a whole number from 0 to 100000, got "${env.ACA_CACHED_RUNS}"`,
      );
    }
  }
  const logLevelText = env.ACA_LOG_LEVEL?.trim().toUpperCase();
  const logLevel = LOG_LEVELS.find((level) => level === logLevelText);
  if (logLevelText && !logLevel) {
    throw new UserInputError(
      `ACA_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.ACA_LOG_LEVEL}"`,
    );
  }
  const temporal = loadTemporalSettings(env);
  const temporalAddress = temporal.connectionOptions.address || '127.0.0.1:7233';
  const temporalHost = temporalAddress.replace(/:\d+$/, '');
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
    taskQueue: env.ACA_TASK_QUEUE || 'coding-agent',
    databaseUrl: env.DATABASE_URL || null,
    openaiBaseUrl: env.OPENAI_BASE_URL || undefined,
    openaiApiKey: env.OPENAI_API_KEY || undefined,
    model: env.ACA_MODEL || DEFAULT_MODEL,
    modelOptions: modelOptionsOf(env),
    logLevel,
    home,
    workspacesRoot: path.resolve(env.ACA_WORKSPACES || path.join(home, 'workspaces')),
    sandbox,
    metricsPort,
    testSlots,
    hostStartTimeoutMs,
    cachedRuns,
    logPrompts: env.ACA_LOG_PROMPTS === '1' || env.ACA_LOG_PROMPTS === 'true',
    uiUrl: (env.ACA_UI_URL || `http://${temporalHost}:8233`).replace(/\/$/, ''),
    gitAuthor: gitAuthorOf(env),
    pricesFile: env.ACA_PRICES ? path.resolve(env.ACA_PRICES) : null,
    gitStore: gitStoreOf(env, home),
    limitMaximums: limitMaximumsOf(env),
  };
}

function limitMaximumsOf(env: NodeJS.ProcessEnv): LimitMaximums {
  const variables = {
    wallSeconds: 'ACA_MAX_WALL_SECONDS',
    cpuSeconds: 'ACA_MAX_CPU_SECONDS',
    memoryMiB: 'ACA_MAX_MEMORY_MIB',
  } as const;
  const maximums: LimitMaximums = { ...DEFAULT_LIMIT_MAXIMUMS };
  for (const key of Object.keys(variables) as (keyof LimitMaximums)[]) {
    const text = env[variables[key]]?.trim();
    if (!text) continue;
    const [low, high] = LIMIT_MAXIMUM_RANGES[key];
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < low || value > high) {
      throw new UserInputError(
        `${variables[key]} must be a whole number from ${low} to ${high}, got "${env[variables[key]]}"`,
      );
    }
    maximums[key] = value;
  }
  return maximums;
}

function gitStoreOf(env: NodeJS.ProcessEnv, home: string): GitStoreLocation {
  try {
    return parseGitStoreLocation(env.ACA_GIT_STORE, home);
  } catch (err) {
    if (err instanceof GitStoreLocationError) throw new UserInputError(err.message);
    throw err;
  }
}

function modelOptionsOf(env: NodeJS.ProcessEnv): ModelOptionsTable {
  const file = env.ACA_MODEL_OPTIONS?.trim();
  if (!file) return {};
  try {
    return parseModelOptionsFile(path.resolve(file));
  } catch (err) {
    if (err instanceof ModelOptionsFileError) throw new UserInputError(err.message);
    throw err;
  }
}

function gitAuthorOf(env: NodeJS.ProcessEnv): { name: string; email: string } {
  const name = (env.ACA_GIT_AUTHOR_NAME ?? 'aca').trim();
  const email = (env.ACA_GIT_AUTHOR_EMAIL ?? 'aca@localhost').trim();
  // git refuses these in an identity; better said at start than at the first commit.
  for (const [variable, value] of [
    ['ACA_GIT_AUTHOR_NAME', name],
    ['ACA_GIT_AUTHOR_EMAIL', email],
  ]) {
    if (value === '' || /[<>\n\0]/.test(value)) {
      throw new UserInputError(
        `${variable} must be non-empty and free of <, > and line breaks, got "${value}"`,
      );
    }
  }
  return { name, email };
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
