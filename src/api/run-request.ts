import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AcaConfig } from '../config';
import { UserInputError } from '../shared/errors';
import { DEFAULT_RUN_OPTIONS, type RunInput } from '../shared/run-types';
import { safeKey } from '../shared/safe-key';
import { LANGUAGES, type Language } from '../shared/types';

/** Everything `aca run` accepts, typed: what a script passes to `AcaClient.start`. */
export interface StartRunRequest {
  task: string;
  language?: Language;
  /** Folder the run works in; a new one under ACA_WORKSPACES when omitted. */
  workspace?: string;
  /** Acceptance tests, copied read-only into the workspace and counted in the pass rate. */
  testsDir?: string;
  maxIterations?: number;
  warnAt?: number;
  /** A token budget; a run over it ends FAILED `budget`. */
  maxTokens?: number;
  model?: string;
  modelTimeoutSeconds?: number;
  /** Model calls one agent turn may make. */
  maxSteps?: number;
  /** The run's workflow id; a readable unique one when omitted. */
  id?: string;
}

/** A validated request: the workflow id and the workflow's input. */
export interface ValidRunRequest {
  workflowId: string;
  input: RunInput;
}

/** Checks a request and fills in the defaults; a UserInputError names the first thing wrong. */
export function validateRunRequest(request: StartRunRequest, config: AcaConfig): ValidRunRequest {
  const task = typeof request.task === 'string' ? request.task.trim() : '';
  if (!task) throw new UserInputError('the task is empty: aca run "<task>" [options]');
  const language = request.language ?? 'python';
  if (!LANGUAGES.includes(language)) {
    throw new UserInputError(`unknown language "${String(language)}"; choose one of ${LANGUAGES.join(', ')}`);
  }
  let testsDir: string | null = null;
  if (request.testsDir !== undefined) {
    testsDir = path.resolve(request.testsDir);
    if (!fs.existsSync(testsDir) || !fs.statSync(testsDir).isDirectory()) {
      throw new UserInputError(`--tests folder ${testsDir} does not exist`);
    }
  }
  const maxIterations =
    wholeNumber(request.maxIterations, 'max-iterations') ?? DEFAULT_RUN_OPTIONS.maxIterations;
  const warnAt =
    wholeNumber(request.warnAt, 'warn-at') ?? Math.min(DEFAULT_RUN_OPTIONS.warnAt, maxIterations);
  const maxTokens = wholeNumber(request.maxTokens, 'max-tokens') ?? null;
  const modelTimeoutSeconds = wholeNumber(request.modelTimeoutSeconds, 'model-timeout');
  const maxSteps = wholeNumber(request.maxSteps, 'max-steps');
  if (request.id !== undefined && !request.id.trim()) throw new UserInputError('--id is empty');
  const workflowId = request.id?.trim() ?? `aca-${slug(task)}-${randomBytes(3).toString('hex')}`;
  const workspace = path.resolve(request.workspace ?? path.join(config.workspacesRoot, safeKey(workflowId)));
  return {
    workflowId,
    input: {
      task,
      language,
      workspace,
      testsDir,
      model: request.model ?? config.model,
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

function wholeNumber(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UserInputError(`--${name} must be a whole number of at least 1, got "${String(value)}"`);
  }
  return value;
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
