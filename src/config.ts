import * as os from 'node:os';
import * as path from 'node:path';
import type { SandboxMode } from './shared/types';
import { UserInputError } from './shared/errors';

/** Everything `aca` reads from the environment (docs/contract.md, section 2), validated once. */
export interface AcaConfig {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  databaseUrl: string | null;
  openaiBaseUrl: string | undefined;
  model: string;
  home: string;
  workspacesRoot: string;
  sandbox: SandboxMode;
  metricsPort: number | null;
  /** Sandboxed test runs a worker runs at once (ACA_TEST_SLOTS; default max(2, CPUs)). */
  testSlots: number;
  logPrompts: boolean;
  /** Base address of the Temporal Web UI, for links. */
  uiUrl: string;
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
  const temporalAddress = env.TEMPORAL_ADDRESS || '127.0.0.1:7233';
  const temporalHost = temporalAddress.replace(/:\d+$/, '');
  return {
    temporalAddress,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.ACA_TASK_QUEUE || 'coding-agent',
    databaseUrl: env.DATABASE_URL || null,
    openaiBaseUrl: env.OPENAI_BASE_URL || undefined,
    model: env.ACA_MODEL || DEFAULT_MODEL,
    home,
    workspacesRoot: path.resolve(env.ACA_WORKSPACES || path.join(home, 'workspaces')),
    sandbox,
    metricsPort,
    testSlots,
    logPrompts: env.ACA_LOG_PROMPTS === '1' || env.ACA_LOG_PROMPTS === 'true',
    uiUrl: (env.ACA_UI_URL || `http://${temporalHost}:8233`).replace(/\/$/, ''),
  };
}
