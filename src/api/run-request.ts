import { newRunId } from './run-ids';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AcaConfig } from '../config';
import { costBudget } from '../llm/cost-budget';
import { UserInputError } from '../shared/errors';
import { DEFAULT_RUN_OPTIONS, type RunInput } from '../shared/run-types';
import {
  checkProjectLimits,
  PROJECT_CONFIG_FILE,
  isValidBranchName,
  resolveRepository,
  runBranch,
  checkTargets,
  repositoryLanguage,
} from '../repo';
import type { ProjectLimits } from '../shared/test-command';
import { LANGUAGES, type Language } from '../shared/types';
import { checkTaskSize } from '../shared/task-size';

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
  /** A budget in dollars at the model's prices; a run over it ends FAILED `budget`. */
  maxCostUsd?: number;
  model?: string;
  modelTimeoutSeconds?: number;
  /** Model calls one agent turn may make. */
  maxSteps?: number;
  /** The run's workflow id; a readable unique one when omitted. */
  id?: string;
  /** A folder in the git repository the run works on (in a worktree on branch `aca/<id>`). */
  repo?: string;
  /** The commit a `repo` run starts from; `HEAD` when omitted. */
  base?: string;
  /** The project's test command; else `.aca.json`'s `testCommand`, else detected. */
  testCommand?: string;
  /** Run once in the worktree before the baseline; else `.aca.json`'s `setupCommand`. */
  setupCommand?: string;
  /** Lets the setup command reach the network (off by default; warned about). */
  setupNetwork?: boolean;
  /** At the iteration limit: `fail` (the default) or `ask`, which waits for `extend`. */
  onLimit?: 'fail' | 'ask';
  /** How long an `ask` run waits at its limit; 24 hours when omitted. */
  askTimeoutMs?: number;
  /** A test run's memory limit in MiB (`--memory`), over `.aca.json`'s `limits.memoryMiB`. */
  memoryMiB?: number;
  /** Wall-clock time one test run may take, in seconds (`--wall-time`), over `.aca.json`'s. */
  wallTimeSeconds?: number;
  /**
   * Tests that must pass for the run to succeed, whatever the baseline said: pytest node ids,
   * `<file>::<full name>` for Jest, or test files; added to `.aca.json`'s `targets`.
   */
  targets?: string[];
  /** False: no failure memory for this run (no lessons recalled, none of its failures stored). */
  failureMemory?: boolean;
  /**
   * The user's own instructions for every agent (`--instructions FILE`'s text), added after the
   * repository's AGENTS.md and the like; at most MAX_INSTRUCTIONS_BYTES.
   */
  instructions?: string;
}

/** The most `--instructions` may hold: far more than an agent's first message can show of it. */
export const MAX_INSTRUCTIONS_BYTES = 256 * 1024;

/** `instructions` of a request, checked; a UserInputError says what is wrong. */
export function checkInstructions(text: unknown): string {
  if (typeof text !== 'string') throw new UserInputError('instructions must be text');
  if (!text.trim()) throw new UserInputError('the --instructions text is empty');
  if (text.includes('\0'))
    throw new UserInputError('the --instructions text contains a NUL byte; is it a text file?');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_INSTRUCTIONS_BYTES) {
    throw new UserInputError(
      `the --instructions text is ${bytes} bytes, over the limit of ${MAX_INSTRUCTIONS_BYTES} (${MAX_INSTRUCTIONS_BYTES / 1024} KiB)`,
    );
  }
  return text;
}

/** A validated request: the workflow id, the workflow's input, and what the user should be told. */
export interface ValidRunRequest {
  workflowId: string;
  input: RunInput;
  /** One line each: uncommitted changes left out, the setup command's network. */
  warnings: string[];
}

/** Checks a request and fills in the defaults; a UserInputError names the first thing wrong. */
export async function validateRunRequest(
  request: StartRunRequest,
  config: AcaConfig,
): Promise<ValidRunRequest> {
  const task = typeof request.task === 'string' ? request.task.trim() : '';
  if (!task) throw new UserInputError('the task is empty: aca run "<task>" [options]');
  checkTaskSize(task);
  if (request.language !== undefined && !LANGUAGES.includes(request.language)) {
    throw new UserInputError(
      `unknown language "${String(request.language)}"; choose one of ${LANGUAGES.join(', ')}`,
    );
  }
  let language: Language = request.language ?? 'python';
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
  const model = request.model ?? config.model;
  const maxCostUsd = costBudget(request.maxCostUsd, model, config);
  const onLimit = request.onLimit ?? 'fail';
  if (onLimit !== 'fail' && onLimit !== 'ask') {
    throw new UserInputError(`--on-limit must be "fail" or "ask", got "${String(onLimit)}"`);
  }
  if (request.askTimeoutMs !== undefined) {
    if (onLimit !== 'ask') throw new UserInputError('--ask-timeout needs --on-limit ask');
    if (!Number.isInteger(request.askTimeoutMs) || request.askTimeoutMs < 1_000) {
      throw new UserInputError('--ask-timeout must be at least one second');
    }
  }
  const limits = requestLimits(request, config);
  const modelTimeoutSeconds = wholeNumber(request.modelTimeoutSeconds, 'model-timeout');
  const maxSteps = wholeNumber(request.maxSteps, 'max-steps');
  if (request.id !== undefined && !request.id.trim()) throw new UserInputError('--id is empty');
  const workflowId = request.id?.trim() ?? newRunId(task);
  // A folder on the host that prepares the run; without it, that host decides.
  const workspace = request.workspace === undefined ? undefined : path.resolve(request.workspace);
  const testCommand = commandOption(request.testCommand, 'test-cmd');
  const setupCommand = commandOption(request.setupCommand, 'setup-cmd');
  const warnings: string[] = [];
  if (request.base !== undefined && request.repo === undefined) {
    throw new UserInputError('--base needs --repo: it names the commit of the repository a run starts from');
  }
  const instructions =
    request.instructions === undefined ? undefined : checkInstructions(request.instructions);
  if (request.targets !== undefined && !Array.isArray(request.targets)) {
    throw new UserInputError('targets must be a list of test ids');
  }
  let repo: RunInput['repo'] = null;
  let targets: string[];
  if (request.repo !== undefined) {
    if (!(await isValidBranchName(runBranch(workflowId)))) {
      throw new UserInputError(
        `the run id "${workflowId}" cannot name a git branch (aca/<id>); choose another --id`,
      );
    }
    const found = await resolveRepository(request.repo, request.base ?? 'HEAD');
    checkProjectLimits(
      found.config.limits,
      config.limitMaximums,
      path.join(found.topLevel, PROJECT_CONFIG_FILE),
    );
    if (workspace !== undefined && isInside(workspace, found.topLevel)) {
      throw new UserInputError(
        `the run's workspace ${workspace} lies inside the repository ${found.topLevel}; set ACA_WORKSPACES or --workspace outside it`,
      );
    }
    repo = { path: found.topLevel, baseCommit: found.baseCommit };
    language = await repositoryLanguage(
      { gitDir: found.commonDir },
      found.baseCommit,
      request.language,
      found.topLevel,
    );
    if (found.uncommittedWarning) warnings.push(found.uncommittedWarning);
    if (found.configWarning) warnings.push(found.configWarning);
    targets = await checkTargets(
      { option: request.targets ?? [], config: found.config.targets },
      { repo: { commonDir: found.commonDir, baseCommit: found.baseCommit, topLevel: found.topLevel } },
    );
  } else {
    targets = await checkTargets({ option: request.targets ?? [], config: [] }, { testsDir });
  }
  if (request.setupNetwork) {
    warnings.push('warning: --setup-network lets the setup command reach the network from the sandbox');
  }
  return {
    workflowId,
    warnings,
    input: {
      task,
      language,
      ...(workspace === undefined ? {} : { workspace }),
      testsDir,
      model,
      options: {
        ...DEFAULT_RUN_OPTIONS,
        maxIterations,
        warnAt,
        maxTokens,
        maxCostUsd,
        onLimit,
        ...(request.askTimeoutMs !== undefined ? { askTimeoutMs: request.askTimeoutMs } : {}),
        ...(modelTimeoutSeconds ? { modelTimeoutMs: modelTimeoutSeconds * 1000 } : {}),
        ...(maxSteps ? { maxStepsPerTurn: maxSteps } : {}),
      },
      repo,
      testCommand,
      setupCommand,
      setupNetwork: request.setupNetwork === true,
      link: null,
      ...(targets.length ? { targets } : {}),
      ...(request.failureMemory === false ? { failureMemory: false } : {}),
      ...(limits ? { limits } : {}),
      ...(instructions === undefined ? {} : { instructions }),
    },
  };
}

/** `--memory` and `--wall-time`: whole numbers within what the sandbox can run and workers allow. */
function requestLimits(request: StartRunRequest, config: AcaConfig): ProjectLimits | null {
  const memoryMiB = wholeNumber(request.memoryMiB, 'memory');
  const wallTimeSeconds = wholeNumber(request.wallTimeSeconds, 'wall-time');
  const { memoryMiB: maxMemory, wallSeconds: maxWall } = config.limitMaximums;
  if (memoryMiB !== undefined && (memoryMiB < 256 || memoryMiB > maxMemory)) {
    throw new UserInputError(
      `--memory must be from 256 MiB (what python or node need to start) to ${maxMemory} (ACA_MAX_MEMORY_MIB), got ${memoryMiB}`,
    );
  }
  if (wallTimeSeconds !== undefined && wallTimeSeconds > maxWall) {
    throw new UserInputError(
      `--wall-time must be at most ${maxWall} seconds (ACA_MAX_WALL_SECONDS), got ${wallTimeSeconds}`,
    );
  }
  if (memoryMiB === undefined && wallTimeSeconds === undefined) return null;
  return { ...(memoryMiB ? { memoryMiB } : {}), ...(wallTimeSeconds ? { wallTimeSeconds } : {}) };
}

function commandOption(value: string | undefined, name: string): string | null {
  if (value === undefined) return null;
  if (value.trim() === '') throw new UserInputError(`--${name} is empty`);
  if (value.includes('\0')) throw new UserInputError(`--${name} contains a NUL character`);
  return value;
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function wholeNumber(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UserInputError(`--${name} must be a whole number of at least 1, got "${String(value)}"`);
  }
  return value;
}

export function firstLine(task: string): string {
  const line = task.split('\n').find((l) => l.trim()) ?? task;
  return line.length > 200 ? `${line.slice(0, 197)}...` : line.trim();
}
