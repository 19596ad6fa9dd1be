import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import {
  buildEvalReport,
  type EvalReport,
  type InstanceOutcome,
  type InstanceRow,
  type InstanceStatus,
} from '../shared/eval-types';
export type { EvalStoreKind } from '../shared/eval-types';
import { safeKey } from '../shared/safe-key';
import type { Language } from '../shared/types';
import { instanceSchema, type EvalInstance } from './instances';
import type { Evaluation } from './evaluate-instance';
import type { RepoSpec } from './specs';

/**
 * A batch's folder (`--out`): predictions.jsonl and report.json at its top, and under `batch/`
 * each instance as frozen when the batch started (with aca's copy of its repository) and each
 * instance's result. The agents' runs never see this folder: only their worktrees.
 */
export interface StoredInstance {
  instance: EvalInstance;
  repoPath: string;
  baseCommit: string;
  language: Language;
  /** `--predictions FILE`: the patch given for this instance (null: none given, an empty patch). */
  prediction: { model_name_or_path: string; model_patch: string } | null;
  /** `--specs`: what the instance's repository needs for its tests; null: nothing given. */
  spec: RepoSpec | null;
}

export interface InstanceResult extends Omit<Evaluation, 'status' | 'reason'> {
  instance_id: string;
  status: InstanceStatus;
  reason: string | null;
  model_name_or_path: string;
  model_patch: string;
  /** The child run that made the patch (agent batches). */
  run: string | null;
  /** How that run ended, why, after how many attempts and at what cost (0 and null without a run). */
  runState: string | null;
  runReason: string | null;
  iterations: number;
  costUsd: number;
  tokens: { prompt: number; completion: number };
}

const storedSchema = z.object({
  instance: instanceSchema,
  repoPath: z.string(),
  baseCommit: z.string(),
  language: z.enum(['python', 'typescript', 'javascript']),
  prediction: z.object({ model_name_or_path: z.string(), model_patch: z.string() }).nullable(),
  spec: z
    .object({
      testCommand: z.string().nullable(),
      setupCommand: z.string().nullable(),
      env: z.record(z.string(), z.string()),
    })
    .nullable()
    .default(null),
});

/**
 * Where a batch's instances and results are kept: the batch's folder on one host, or Postgres
 * (batch-repository.ts) when the workers share no folder. Instances keep the order they were
 * given; the submitted ones (those the batch runs) are paged by their position among themselves.
 */
export interface EvalBatchStore {
  /** Every instance the report counts, in order; `submitted`: those the batch runs. */
  saveInstances(stored: StoredInstance[], submitted: ReadonlySet<string>): Promise<void>;
  /** The ids of the submitted instances from position `from`, at most `count` of them. */
  submittedIds(from: number, count: number): Promise<string[]>;
  instance(id: string): Promise<StoredInstance>;
  result(id: string): Promise<InstanceResult | null>;
  saveResult(result: InstanceResult): Promise<void>;
  /** Every instance the report counts, in order, with its result (null: not submitted or not ended). */
  reportRows(): AsyncIterable<{ id: string; result: InstanceResult | null }>;
  /** Removes what saveInstances wrote, for a batch that could not be started. */
  discard(): Promise<void>;
}

export function parseStoredInstance(json: string): StoredInstance {
  return storedSchema.parse(JSON.parse(json)) as StoredInstance;
}

export function instanceFile(outDir: string, id: string): string {
  return path.join(outDir, 'batch', 'instances', `${safeKey(id)}.json`);
}

export function resultFile(outDir: string, id: string): string {
  return path.join(outDir, 'batch', 'results', `${safeKey(id)}.json`);
}

function orderFile(outDir: string): string {
  return path.join(outDir, 'batch', 'order.json');
}

/** The batch's folder as its store: one host, or hosts that see the folder at the same path. */
export class FolderBatchStore implements EvalBatchStore {
  private order: { all: string[]; submitted: string[] } | null = null;

  constructor(private readonly outDir: string) {}

  async saveInstances(stored: StoredInstance[], submitted: ReadonlySet<string>): Promise<void> {
    fs.mkdirSync(path.join(this.outDir, 'batch', 'instances'), { recursive: true });
    fs.mkdirSync(path.join(this.outDir, 'batch', 'results'), { recursive: true });
    for (const s of stored)
      writeAtomically(instanceFile(this.outDir, s.instance.instance_id), JSON.stringify(s));
    const all = stored.map((s) => s.instance.instance_id);
    writeAtomically(
      orderFile(this.outDir),
      JSON.stringify({ all, submitted: all.filter((id) => submitted.has(id)) }),
    );
  }

  async submittedIds(from: number, count: number): Promise<string[]> {
    return this.readOrder().submitted.slice(from, from + count);
  }

  async instance(id: string): Promise<StoredInstance> {
    return parseStoredInstance(fs.readFileSync(instanceFile(this.outDir, id), 'utf8'));
  }

  async result(id: string): Promise<InstanceResult | null> {
    try {
      return JSON.parse(fs.readFileSync(resultFile(this.outDir, id), 'utf8')) as InstanceResult;
    } catch {
      return null;
    }
  }

  async saveResult(result: InstanceResult): Promise<void> {
    writeAtomically(resultFile(this.outDir, result.instance_id), `${JSON.stringify(result, null, 2)}\n`);
  }

  async *reportRows(): AsyncIterable<{ id: string; result: InstanceResult | null }> {
    for (const id of this.readOrder().all) yield { id, result: await this.result(id) };
  }

  async discard(): Promise<void> {
    fs.rmSync(path.join(this.outDir, 'batch'), { recursive: true, force: true });
    try {
      fs.rmdirSync(this.outDir);
    } catch {
      // Not empty (the user's own files) or already gone: left as it is.
    }
  }

  private readOrder(): { all: string[]; submitted: string[] } {
    this.order ??= JSON.parse(fs.readFileSync(orderFile(this.outDir), 'utf8')) as {
      all: string[];
      submitted: string[];
    };
    return this.order;
  }
}

/**
 * predictions.jsonl (one line per submitted instance, SWE-bench's three fields) and report.json
 * in `outDir`, both replaced whole, so a reader never sees half of either. Returns the report's
 * counts without its lists of ids, which grow with the batch (the workflow keeps only the counts).
 */
export async function writeBatchOutputs(store: EvalBatchStore, outDir: string): Promise<EvalReport> {
  const lines: string[] = [];
  const instances: InstanceRow[] = [];
  const outcomes: InstanceOutcome[] = [];
  const ids: string[] = [];
  for await (const { id, result } of store.reportRows()) {
    ids.push(id);
    // An instance without a result was not submitted (never started, or given no prediction).
    if (!result) continue;
    outcomes.push({
      id,
      status: result.status,
      reason: result.reason,
      costUsd: result.costUsd ?? 0,
      tokens: result.tokens ?? { prompt: 0, completion: 0 },
    });
    lines.push(
      JSON.stringify({
        instance_id: id,
        model_name_or_path: result.model_name_or_path ?? '',
        model_patch: result.model_patch ?? '',
      }),
    );
    instances.push(instanceRow(result));
  }
  const report = buildEvalReport(ids, outcomes);
  writeAtomically(path.join(outDir, 'predictions.jsonl'), lines.map((l) => `${l}\n`).join(''));
  writeAtomically(path.join(outDir, 'report.json'), `${JSON.stringify({ ...report, instances }, null, 2)}\n`);
  return withoutIds(report);
}

/** The report's counts, cost and tokens, its lists of ids left empty. */
export function withoutIds(report: EvalReport): EvalReport {
  return {
    ...report,
    submitted_ids: [],
    completed_ids: [],
    resolved_ids: [],
    unresolved_ids: [],
    empty_patch_ids: [],
    error_ids: [],
  };
}

/** report.json's row of an instance, from its result. */
export function instanceRow(result: InstanceResult): InstanceRow {
  return {
    instance_id: result.instance_id,
    state: result.runState ?? null,
    reason: rowReason(result),
    iterations: result.iterations ?? 0,
    cost_usd: result.costUsd ?? 0,
    resolved: result.status === 'resolved',
    failed_tests: result.tests
      ? [...result.tests.FAIL_TO_PASS.failure, ...result.tests.PASS_TO_PASS.failure]
      : [],
  };
}

/**
 * The row's reason: the error instance's, else the reason its run ended with (`max_iterations`,
 * `budget`…), else, for a run that ended SUCCESS or none at all, why the instance is not resolved.
 */
function rowReason(result: InstanceResult): string | null {
  if (result.status === 'error') return result.reason;
  return result.runReason ?? (result.status === 'resolved' ? null : result.reason);
}

/** report.json as written at the batch's last step, or null before. */
export function readBatchReport(outDir: string): EvalReport | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(outDir, 'report.json'), 'utf8')) as EvalReport;
  } catch {
    return null;
  }
}

function writeAtomically(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}
