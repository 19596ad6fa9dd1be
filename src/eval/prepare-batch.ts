import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AcaConfig } from '../config';
import { costBudget } from '../llm/cost-budget';
import { git, repositoryLanguage, isValidBranchName, runBranch } from '../repo';
import { UserInputError } from '../shared/errors';
import { evalChildId, type EvalBatchInput, type EvalSource } from '../shared/eval-types';
import { DEFAULT_RUN_OPTIONS } from '../shared/run-types';
import { safeKey } from '../shared/safe-key';
import type { Language } from '../shared/types';
import { evalDatabase } from './batch-repository';
import type { StoredInstance } from './batch-store';
import { openBatchStore } from './open-batch-store';
import { publishCopy } from './store-copies';
import { readInstances, selectInstances, type EvalInstance } from './instances';
import { readPredictions } from './predictions';
import { readSpecs, type RepoSpec } from './specs';
import { evalRepositoryCopy, findRepoSource } from './repositories';

export interface EvalRequest {
  instancesFile: string;
  reposDir: string;
  model?: string;
  concurrency?: number;
  maxIterations?: number;
  maxCostUsd?: number;
  only?: string[];
  limit?: number;
  id?: string;
  outDir?: string;
  /** `gold`, `empty` or a predictions file; absent: the agent makes the patches. */
  predictions?: string;
  /** `--specs FILE`: each repository's test command, setup command and variables (specs.ts). */
  specs?: string;
}

export const DEFAULT_EVAL_CONCURRENCY = 4;

/**
 * Checks an `aca eval` request and readies everything the batch needs before it starts: the
 * instances read and frozen into the batch's folder, each repository copied once into aca's home
 * (the user's copy only read), every base commit found. A UserInputError names the first problem.
 */
export async function prepareEvalBatch(
  request: EvalRequest,
  config: AcaConfig,
): Promise<{ workflowId: string; input: EvalBatchInput }> {
  if (!request.reposDir)
    throw new UserInputError('--repos DIR is needed: the folder holding the repositories');
  if (!fs.existsSync(request.reposDir) || !fs.statSync(request.reposDir).isDirectory()) {
    throw new UserInputError(`--repos ${path.resolve(request.reposDir)} is not a folder`);
  }
  const instances = selectInstances(readInstances(request.instancesFile), request.only, request.limit);
  const batchId =
    request.id?.trim() || `eval-${new Date().toISOString().slice(0, 10)}-${randomBytes(3).toString('hex')}`;
  if (!(await isValidBranchName(runBranch(evalChildId(batchId, instances[0]!.instance_id))))) {
    throw new UserInputError(
      `the batch id "${batchId}" cannot name git branches (aca/<batch>/<instance>); choose another --id`,
    );
  }
  const outDir = path.resolve(request.outDir ?? path.join(config.home, 'evals', safeKey(batchId)));
  if (fs.existsSync(outDir) && fs.readdirSync(outDir).length > 0) {
    throw new UserInputError(`--out ${outDir} is not empty: another batch's outputs are there`);
  }
  const source: EvalSource =
    request.predictions === undefined
      ? 'agent'
      : request.predictions === 'gold' || request.predictions === 'empty'
        ? request.predictions
        : 'file';
  const predictions = source === 'file' ? readPredictions(request.predictions!) : null;
  const specs = request.specs === undefined ? new Map<string, RepoSpec>() : readSpecs(request.specs);
  const model = request.model ?? config.model;
  const maxCostUsd = costBudget(request.maxCostUsd, model, config);
  const stored = await storedInstances(instances, request.reposDir, config.home, predictions, specs);
  // With a git store, hosts that share no folder make their own copies from it.
  if (!config.gitStore.isDefault) {
    for (const copy of new Set(stored.map((s) => s.repoPath))) await publishCopy(config.gitStore, copy);
  }
  // Given predictions: an instance without one is not submitted, as in SWE-bench.
  const submitted = new Set(
    instances.map((i) => i.instance_id).filter((id) => !predictions || predictions.has(id)),
  );
  // With DATABASE_URL the workers may share no folder: the database is where they all read.
  const store = config.databaseUrl ? ('database' as const) : ('folder' as const);
  const database = config.databaseUrl ? evalDatabase(config.databaseUrl) : undefined;
  try {
    await openBatchStore({ batchId, outDir, store }, database).saveInstances(stored, submitted);
  } finally {
    await database?.close();
  }
  const maxIterations = request.maxIterations ?? DEFAULT_RUN_OPTIONS.maxIterations;
  return {
    workflowId: batchId,
    input: {
      batchId,
      outDir,
      store,
      submitted: submitted.size,
      total: instances.length,
      // An evaluation may wait for one of its host's test slots: longer than a run's step may.
      evalStartTimeoutMs: config.hostStartTimeoutMs * 10,
      ...(config.heartbeatTimeoutMs !== null ? { evalHeartbeatTimeoutMs: config.heartbeatTimeoutMs } : {}),
      source,
      modelName: source === 'agent' ? model : source === 'file' ? 'predictions' : source,
      concurrency: request.concurrency ?? DEFAULT_EVAL_CONCURRENCY,
      maxCostUsd,
      run: {
        model,
        options: {
          ...DEFAULT_RUN_OPTIONS,
          maxIterations,
          warnAt: Math.min(DEFAULT_RUN_OPTIONS.warnAt, maxIterations),
        },
      },
    },
  };
}

async function storedInstances(
  instances: EvalInstance[],
  reposDir: string,
  home: string,
  predictions: Map<string, { model_name_or_path: string; model_patch: string }> | null,
  specs: Map<string, RepoSpec>,
): Promise<StoredInstance[]> {
  const byRepo = new Map<string, EvalInstance[]>();
  for (const instance of instances)
    byRepo.set(instance.repo, [...(byRepo.get(instance.repo) ?? []), instance]);
  const stored: StoredInstance[] = [];
  for (const [repo, group] of byRepo) {
    const source = findRepoSource(reposDir, repo);
    const repoPath = await evalRepositoryCopy(
      home,
      source,
      group.map((i) => i.base_commit),
    );
    const gitDir = path.join(repoPath, '.git');
    const languages = new Map<string, Language>();
    for (const instance of group) {
      const baseCommit = (
        await git({ gitDir }, [
          'rev-parse',
          '--verify',
          '--end-of-options',
          `${instance.base_commit}^{commit}`,
        ])
      ).trim();
      // One language a repository: its files at the first instance's base commit decide.
      let language = languages.get(repo);
      if (!language) {
        language = await repositoryLanguage({ gitDir }, baseCommit, undefined, source.path);
        languages.set(repo, language);
      }
      stored.push({
        instance,
        repoPath,
        baseCommit,
        language,
        prediction: predictions?.get(instance.instance_id) ?? null,
        spec: specs.get(instance.repo) ?? null,
      });
    }
  }
  return stored;
}

/** Undoes what prepareEvalBatch wrote (in the batch's folder or the database), when the batch could not be started. */
export async function discardPreparedBatch(input: EvalBatchInput, config: AcaConfig): Promise<void> {
  const database =
    input.store === 'database' && config.databaseUrl ? evalDatabase(config.databaseUrl) : undefined;
  try {
    await openBatchStore(input, database).discard();
  } finally {
    await database?.close();
  }
}
