import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { AcaClient } from '../api/aca-client';
import type { AcaConfig } from '../config';
import type { EvalRequest } from '../eval/prepare-batch';
import { readBatchReport } from '../eval/batch-store';
import { RunNotFoundError, UserInputError } from '../shared/errors';
import {
  EVAL_WORKFLOW_TYPE,
  type EvalBatchInput,
  type EvalProgress,
  type EvalReport,
} from '../shared/eval-types';
import { jsonForTerminal, printableLine } from '../shared/terminal-text';
import { evalBatchWorkflow, evalProgressQuery } from '../workflows/eval-batch';
import { pauseSignal, resumeSignal } from '../workflows/signals';
import { positiveInteger } from '../shared/option-numbers';
import { EXIT, type CliIO } from './cli-context';

const OUT_DIR_MEMO = 'acaEvalOut';

export interface EvalFlags {
  repos?: string;
  model?: string;
  concurrency?: string;
  maxIterations?: string;
  maxCost?: string;
  only?: string;
  limit?: string;
  id?: string;
  out?: string;
  predictions?: string;
  specs?: string;
  detach?: boolean;
  json?: boolean;
}

/** The flags as a request; a UserInputError for a value of the wrong kind. */
export function evalRequest(file: string | undefined, flags: EvalFlags): EvalRequest {
  if (!file) throw new UserInputError('the instances file is needed: aca eval <instances.jsonl> --repos DIR');
  let maxCostUsd: number | undefined;
  if (flags.maxCost !== undefined) {
    maxCostUsd = Number(flags.maxCost);
    if (!Number.isFinite(maxCostUsd) || maxCostUsd <= 0) {
      throw new UserInputError(`--max-cost must be a positive number of dollars, got "${flags.maxCost}"`);
    }
  }
  const only = flags.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const concurrency = positiveInteger(flags.concurrency, 'concurrency');
  const maxIterations = positiveInteger(flags.maxIterations, 'max-iterations');
  const limit = positiveInteger(flags.limit, 'limit');
  return {
    instancesFile: file,
    reposDir: flags.repos ?? '',
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(maxIterations !== undefined ? { maxIterations } : {}),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
    ...(only?.length ? { only } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(flags.id !== undefined ? { id: flags.id } : {}),
    ...(flags.out !== undefined ? { outDir: flags.out } : {}),
    ...(flags.predictions !== undefined ? { predictions: flags.predictions } : {}),
    ...(flags.specs !== undefined ? { specs: flags.specs } : {}),
  };
}

/** `aca eval`: readies the batch, starts it, and follows it to its end (or returns at once with --detach). */
export async function evalCommand(
  aca: AcaClient,
  config: AcaConfig,
  prepared: { workflowId: string; input: EvalBatchInput },
  flags: EvalFlags,
  io: CliIO,
  onStarted: () => void = () => undefined,
): Promise<number> {
  const { workflowId, input } = prepared;
  try {
    await aca.temporal.workflow.start(evalBatchWorkflow, {
      workflowId,
      taskQueue: config.taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      // Where report.json is, for `aca eval report`.
      memo: { [OUT_DIR_MEMO]: input.outDir },
      staticSummary: `aca eval: ${input.ids.length} instances (${input.source === 'agent' ? input.run.model : input.source})`,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new UserInputError(`a workflow with id ${workflowId} exists already: choose another --id`);
    }
    throw err;
  }
  onStarted();
  if (flags.detach) {
    io.out(flags.json ? jsonForTerminal({ batch: workflowId, out: input.outDir }) : workflowId);
    return EXIT.success;
  }
  if (!flags.json) {
    io.err(
      printableLine(`Started batch ${workflowId}: ${input.ids.length} instances, outputs in ${input.outDir}`),
    );
    io.err(printableLine(`Web UI: ${aca.webUrl(workflowId)}`));
  }
  const report = await followBatch(aca, workflowId, io);
  printReport(readBatchReport(input.outDir) ?? report, workflowId, flags.json === true, io, input.outDir);
  return EXIT.success;
}

/** Prints a progress line whenever it changes until the batch ends; its report. */
async function followBatch(aca: AcaClient, batchId: string, io: CliIO): Promise<EvalReport> {
  const handle = aca.temporal.workflow.getHandle(batchId);
  const result = handle.result() as Promise<EvalReport>;
  let ended = false;
  void result.finally(() => (ended = true)).catch(() => undefined);
  let last = '';
  while (!ended) {
    try {
      const line = progressLine(await handle.query(evalProgressQuery));
      if (line !== last) io.err(line);
      last = line;
    } catch {
      // Not picked up by a worker yet, or between two executions of the batch.
    }
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
  return result;
}

export function progressLine(p: EvalProgress): string {
  return printableLine(
    `${p.batchId}: done ${p.done}/${p.total} · running ${p.running} · resolved ${p.resolved} · unresolved ${p.unresolved} · empty ${p.emptyPatch} · errors ${p.errors} · $${p.costUsd.toFixed(4)}${p.paused ? ' · PAUSED' : ''}${p.stopped ? ` · stopped (${p.stopped})` : ''}`,
  );
}

function printReport(report: EvalReport, batchId: string, json: boolean, io: CliIO, outDir?: string): void {
  if (json) {
    io.out(jsonForTerminal(report));
    return;
  }
  io.out(
    printableLine(
      `${batchId}: ${report.resolved_instances}/${report.total_instances} resolved (${report.submitted_instances} submitted, ${report.unresolved_instances} unresolved, ${report.empty_patch_instances} empty patches, ${report.error_instances} errors), $${report.cost_usd.toFixed(4)}`,
    ),
  );
  if (outDir) io.out(printableLine(`predictions.jsonl and report.json in ${outDir}`));
}

/** The batch's handle, or a RunNotFoundError (exit 2) for an id that is no batch. */
async function batchHandle(aca: AcaClient, batchId: string) {
  const handle = aca.temporal.workflow.getHandle(batchId);
  try {
    const description = await handle.describe();
    if (description.type !== EVAL_WORKFLOW_TYPE)
      throw new RunNotFoundError(batchId, `${batchId} is not an aca eval batch`);
    const outDir = description.memo?.[OUT_DIR_MEMO];
    return { handle, status: description.status.name, outDir: typeof outDir === 'string' ? outDir : null };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new RunNotFoundError(batchId, `no batch ${batchId}`);
    throw err;
  }
}

/** `aca eval status <batch>`: where the batch is. */
export async function evalStatusCommand(
  aca: AcaClient,
  batchId: string,
  flags: { json?: boolean },
  io: CliIO,
) {
  const { handle, status } = await batchHandle(aca, batchId);
  let progress: EvalProgress;
  if (status === 'RUNNING') {
    progress = await handle.query(evalProgressQuery);
  } else {
    const report = (await handle.result()) as EvalReport;
    progress = {
      batchId,
      total: report.total_instances,
      done: report.submitted_instances,
      running: 0,
      resolved: report.resolved_instances,
      unresolved: report.unresolved_instances,
      emptyPatch: report.empty_patch_instances,
      errors: report.error_instances,
      costUsd: report.cost_usd,
      tokens: report.tokens,
      paused: false,
      stopped: null,
      ended: true,
      runningIds: [],
    };
  }
  io.out(flags.json ? jsonForTerminal(progress) : progressLine(progress));
  return EXIT.success;
}

/** `aca eval report <batch>`: waits for the end, then the report (report.json's object with --json). */
export async function evalReportCommand(
  aca: AcaClient,
  batchId: string,
  flags: { json?: boolean },
  io: CliIO,
) {
  const { handle, outDir } = await batchHandle(aca, batchId);
  const report = (await handle.result()) as EvalReport;
  // report.json has each instance's row too; the workflow's result only the counts and lists.
  printReport((outDir ? readBatchReport(outDir) : null) ?? report, batchId, flags.json === true, io);
  return EXIT.success;
}

/**
 * `aca pause|resume|cancel <batch>`: the batch passes a pause or resume to its runs in flight and
 * cancels them with itself. Null when the id is not a batch (the run commands handle it).
 */
export async function evalBatchControl(
  aca: AcaClient,
  id: string,
  action: 'pause' | 'resume' | 'cancel',
  io: CliIO,
): Promise<number | null> {
  const handle = aca.temporal.workflow.getHandle(id);
  let description;
  try {
    description = await handle.describe();
  } catch {
    return null;
  }
  if (description.type !== EVAL_WORKFLOW_TYPE) return null;
  if (description.status.name !== 'RUNNING') {
    throw new UserInputError(`batch ${id} has already ended (${description.status.name})`);
  }
  if (action === 'cancel') {
    await handle.cancel();
    io.out(
      printableLine(
        `Cancellation of batch ${id} requested: its runs in flight are cancelled, no new one starts.`,
      ),
    );
  } else {
    await handle.signal(action === 'pause' ? pauseSignal : resumeSignal);
    io.out(printableLine(action === 'pause' ? `Paused batch ${id} and its runs.` : `Resumed batch ${id}.`));
  }
  return EXIT.success;
}
