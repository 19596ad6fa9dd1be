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

export function instanceFile(outDir: string, id: string): string {
  return path.join(outDir, 'batch', 'instances', `${safeKey(id)}.json`);
}

export function resultFile(outDir: string, id: string): string {
  return path.join(outDir, 'batch', 'results', `${safeKey(id)}.json`);
}

export function writeStoredInstances(outDir: string, stored: StoredInstance[]): void {
  fs.mkdirSync(path.join(outDir, 'batch', 'instances'), { recursive: true });
  fs.mkdirSync(path.join(outDir, 'batch', 'results'), { recursive: true });
  for (const s of stored) writeAtomically(instanceFile(outDir, s.instance.instance_id), JSON.stringify(s));
}

export function readStoredInstance(outDir: string, id: string): StoredInstance {
  const parsed = storedSchema.parse(JSON.parse(fs.readFileSync(instanceFile(outDir, id), 'utf8')));
  return parsed as StoredInstance;
}

export function writeResult(outDir: string, result: InstanceResult): void {
  writeAtomically(resultFile(outDir, result.instance_id), `${JSON.stringify(result, null, 2)}\n`);
}

export function readResult(outDir: string, id: string): InstanceResult | null {
  try {
    return JSON.parse(fs.readFileSync(resultFile(outDir, id), 'utf8')) as InstanceResult;
  } catch {
    return null;
  }
}

/**
 * predictions.jsonl (one line per submitted instance, SWE-bench's three fields) and report.json,
 * both replaced whole, so a reader never sees half of either.
 */
export function writeBatchOutputs(outDir: string, ids: string[]): EvalReport {
  const lines: string[] = [];
  const instances: InstanceRow[] = [];
  const outcomes: InstanceOutcome[] = [];
  for (const id of ids) {
    const result = readResult(outDir, id);
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
        model_name_or_path: result?.model_name_or_path ?? '',
        model_patch: result?.model_patch ?? '',
      }),
    );
    instances.push(instanceRow(result));
  }
  const report = buildEvalReport(ids, outcomes);
  writeAtomically(path.join(outDir, 'predictions.jsonl'), lines.map((l) => `${l}\n`).join(''));
  writeAtomically(path.join(outDir, 'report.json'), `${JSON.stringify({ ...report, instances }, null, 2)}\n`);
  return report;
}

/** report.json's row of an instance, from its result. */
export function instanceRow(result: InstanceResult): InstanceRow {
  return {
    instance_id: result.instance_id,
    state: result.runState ?? null,
    reason: result.reason,
    iterations: result.iterations ?? 0,
    cost_usd: result.costUsd ?? 0,
    resolved: result.status === 'resolved',
    failed_tests: result.tests
      ? [...result.tests.FAIL_TO_PASS.failure, ...result.tests.PASS_TO_PASS.failure]
      : [],
  };
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
