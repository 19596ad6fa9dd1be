import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { AcaConfig } from '../config';
import { DEFAULT_RUN_OPTIONS, type RunInput, type RunResult } from '../shared/run-types';
import {
  AgentIterationKey,
  AgentLanguageKey,
  AgentPassRateKey,
  AgentStateKey,
} from '../shared/search-attributes';
import { safeKey } from '../shared/safe-key';
import { LANGUAGES, type Language } from '../shared/types';
import { UserInputError } from '../shared/errors';
import { positiveInteger } from './args';
import { EXIT, type CliIO } from './cli-context';
import { followRun } from './follow-run';
import { summaryLines } from './progress';
import { codingAgentWorkflow, pauseSignal, runHandle } from './run-handle';

/** `aca run`'s options as commander hands them over: values unparsed, checked below. */
export interface RunFlags {
  language?: string;
  workspace?: string;
  tests?: string;
  maxIterations?: string;
  warnAt?: string;
  maxTokens?: string;
  model?: string;
  id?: string;
  detach?: boolean;
  json?: boolean;
  modelTimeout?: string;
  maxSteps?: string;
}

export interface RunRequest {
  workflowId: string;
  input: RunInput;
  detach: boolean;
  json: boolean;
}

/** Turns `aca run` words into a run request, or a UserInputError that names what is wrong. */
export function parseRunRequest(rawTask: string, flags: RunFlags, config: AcaConfig): RunRequest {
  const task = rawTask.trim();
  if (!task) throw new UserInputError('the task is empty: aca run "<task>" [options]');
  const language = (flags.language ?? 'python') as Language;
  if (!LANGUAGES.includes(language)) {
    throw new UserInputError(
      `unknown language "${String(flags.language)}"; choose one of ${LANGUAGES.join(', ')}`,
    );
  }
  let testsDir: string | null = null;
  if (flags.tests !== undefined) {
    testsDir = path.resolve(String(flags.tests));
    if (!fs.existsSync(testsDir) || !fs.statSync(testsDir).isDirectory()) {
      throw new UserInputError(`--tests folder ${testsDir} does not exist`);
    }
  }
  const maxIterations =
    positiveInteger(flags.maxIterations, 'max-iterations') ?? DEFAULT_RUN_OPTIONS.maxIterations;
  const warnAt =
    positiveInteger(flags.warnAt, 'warn-at') ?? Math.min(DEFAULT_RUN_OPTIONS.warnAt, maxIterations);
  const maxTokens = positiveInteger(flags.maxTokens, 'max-tokens') ?? null;
  const modelTimeoutSeconds = positiveInteger(flags.modelTimeout, 'model-timeout');
  const maxSteps = positiveInteger(flags.maxSteps, 'max-steps');
  const id = flags.id;
  if (id !== undefined && !id.trim()) throw new UserInputError('--id is empty');
  const workflowId = id?.trim() ?? `aca-${slug(task)}-${randomBytes(3).toString('hex')}`;
  const workspace = path.resolve(flags.workspace ?? path.join(config.workspacesRoot, safeKey(workflowId)));
  return {
    workflowId,
    detach: flags.detach === true,
    json: flags.json === true,
    input: {
      task,
      language,
      workspace,
      testsDir,
      model: flags.model ?? config.model,
      options: {
        ...DEFAULT_RUN_OPTIONS,
        maxIterations,
        warnAt,
        maxTokens,
        ...(modelTimeoutSeconds ? { modelTimeoutMs: modelTimeoutSeconds * 1000 } : {}),
        ...(maxSteps ? { maxStepsPerTurn: maxSteps } : {}),
      },
    },
  };
}

function slug(task: string): string {
  return (
    task
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 24)
      .replace(/-$/, '') || 'run'
  );
}

export function firstLine(task: string): string {
  const line = task.split('\n').find((l) => l.trim()) ?? task;
  return line.length > 200 ? `${line.slice(0, 197)}...` : line.trim();
}

export async function startRun(
  client: Client,
  config: AcaConfig,
  request: RunRequest,
  taskQueue = config.taskQueue,
) {
  return client.workflow.start(codingAgentWorkflow, {
    workflowId: request.workflowId,
    taskQueue,
    args: [request.input],
    staticSummary: firstLine(request.input.task),
    staticDetails: `**Task:** ${request.input.task}\n\n**Language:** ${request.input.language} · **Model:** ${request.input.model} · **Workspace:** ${request.input.workspace}`,
    typedSearchAttributes: [
      { key: AgentStateKey, value: 'INIT' },
      { key: AgentIterationKey, value: 0 },
      { key: AgentPassRateKey, value: 0 },
      { key: AgentLanguageKey, value: request.input.language },
    ],
  });
}

export function runLink(config: AcaConfig, workflowId: string): string {
  return `${config.uiUrl}/namespaces/${encodeURIComponent(config.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export function exitCodeFor(result: RunResult): number {
  if (result.state === 'SUCCESS') return EXIT.success;
  return result.reason === 'cancelled' ? EXIT.cancelled : EXIT.failed;
}

/** Follows a started run to its end, printing progress and a summary (or one JSON object). */
export async function attachToRun(
  client: Client,
  config: AcaConfig,
  workflowId: string,
  io: CliIO,
  options: { json: boolean; interruptPauses: boolean },
): Promise<number> {
  const handle = runHandle(client, workflowId);
  const { startTime } = await handle.describe();
  const followed = await followRun(handle, io, { quiet: options.json, startedAt: startTime.getTime() });
  if (followed.kind === 'interrupted') {
    // Ctrl-C: `aca run` pauses the run (nothing new starts until `aca resume`); `aca watch`
    // only stops watching. Either way the exit code says "interrupted", never "succeeded".
    if (options.interruptPauses) {
      try {
        await handle.signal(pauseSignal);
      } catch (err) {
        // The run ended between the Ctrl-C and the signal: report how it ended instead.
        if ((await handle.describe()).status.name === 'RUNNING') throw err;
        return report(await handle.result());
      }
      io.err(
        `\nPaused ${workflowId}. Resume it with \`aca resume ${workflowId}\` and re-attach with \`aca watch ${workflowId}\`.`,
      );
    } else {
      io.err(
        `\nStopped watching ${workflowId}; the run goes on. Re-attach with \`aca watch ${workflowId}\`.`,
      );
    }
    return EXIT.cancelled;
  }
  return report(followed.result);

  function report(result: RunResult): number {
    if (options.json) io.out(JSON.stringify(result));
    else for (const line of summaryLines(result, runLink(config, workflowId))) io.out(line);
    return exitCodeFor(result);
  }
}
