import type { AcaClient, AcaRun, RunSummary } from '../api/aca-client';
import { endedWithoutResult } from '../api/run-without-result';
import type { ReviewRisk } from '../repo';
import { UserInputError } from '../shared/errors';
import type { RunResult } from '../shared/run-types';
import { describeTargets } from '../shared/targets';
import { baselineFailuresLine } from '../shared/baseline-failures';
import type { ListedState } from '../shared/types';
import { positiveInteger } from '../shared/option-numbers';
import { jsonForTerminal, printableLine, printableName } from '../shared/terminal-text';
import { EXIT, type CliIO } from './cli-context';
import { formatPassRate, summaryLines } from './progress';
import { attachToRun, exitCodeFor } from './run-command';
import { reviewWithCareLines } from './review-with-care';
import { renderRunLog } from './run-log';

export async function statusCommand(
  aca: AcaClient,
  id: string,
  flags: { json?: boolean },
  io: CliIO,
): Promise<number> {
  const s = await aca.run(id).state();
  if (flags.json) {
    io.out(jsonForTerminal(s));
    return EXIT.success;
  }
  // Each line one field: a newline in an analysis must not forge the line after it.
  const lines = [
    s.ended
      ? `${s.workflowId}: ${s.ended.status} (in ${s.state})`
      : `${s.workflowId}: ${s.paused ? 'PAUSED' : s.state}${s.reason ? ` (${s.reason})` : ''}`,
    `  iteration ${s.iterations}/${s.maxIterations}, pass rate ${formatPassRate(s.passRate, s.tests)}, paused: ${s.paused ? 'yes' : 'no'}`,
  ];
  if (s.waiting === 'limit') {
    lines.push(
      `  waiting at its iteration limit: aca extend ${s.workflowId} --iterations N gives it N more attempts`,
    );
  }
  if (s.targets?.length) lines.push(`  targets: ${describeTargets(s.targets, printableName)}`);
  if (s.failingTests?.length) lines.push(`  failing: ${s.failingTests.map(printableName).join(', ')}`);
  const excused = baselineFailuresLine(s, printableName);
  if (excused) lines.push(`  warning: ${excused}`);
  if (s.warning) lines.push(`  warning: ${s.warning}`);
  if (s.lastAnalysis) {
    lines.push(`  last analysis: ${s.lastAnalysis.rootCause}`);
    lines.push(`  fix hypothesis: ${s.lastAnalysis.fixHypothesis}`);
  }
  if (s.error) lines.push(`  last error: ${s.error}`);
  if (s.ended && s.place) {
    lines.push(
      `  left behind: ${s.place.workTree}, branch ${s.place.branch}; aca discard ${s.workflowId} removes them`,
    );
  }
  const discarded = aca.run(id).discardedAt();
  if (discarded) lines.push(`  discarded: ${discarded} (aca discard); its changes are gone`);
  for (const line of lines) io.out(printableLine(line));
  return EXIT.success;
}

export async function watchCommand(aca: AcaClient, id: string, io: CliIO): Promise<number> {
  await aca.run(id).status();
  return attachToRun(aca, id, io, { json: false, interruptPauses: false });
}

export async function pauseResumeCommand(
  aca: AcaClient,
  id: string,
  io: CliIO,
  action: 'pause' | 'resume',
): Promise<number> {
  const run = aca.run(id);
  const before = action === 'pause' ? await run.pause() : await run.resume();
  io.out(action === 'pause' ? `Paused ${id} (it was ${before.state}).` : `Resumed ${id}.`);
  return EXIT.success;
}

export async function feedbackCommand(aca: AcaClient, id: string, text: string, io: CliIO): Promise<number> {
  const { pending } = await aca.run(id).feedback(text);
  io.out(`Feedback delivered to ${id}; the next Coder turn receives it (${pending} pending).`);
  return EXIT.success;
}

export async function extendCommand(
  aca: AcaClient,
  id: string,
  flags: { iterations?: string; feedback?: string },
  io: CliIO,
): Promise<number> {
  const iterations = positiveInteger(flags.iterations, 'iterations');
  if (iterations === undefined) throw new UserInputError('--iterations N is needed: how many more attempts');
  const { maxIterations } = await aca.run(id).extend(iterations, flags.feedback);
  io.out(`Extended ${id}: ${iterations} more attempt${iterations === 1 ? '' : 's'}, up to ${maxIterations}.`);
  return EXIT.success;
}

export async function cancelCommand(aca: AcaClient, id: string, io: CliIO): Promise<number> {
  await aca.run(id).cancel();
  io.out(`Cancellation of ${id} requested.`);
  return EXIT.success;
}

export async function resultCommand(
  aca: AcaClient,
  id: string,
  flags: { json?: boolean; wait: boolean },
  io: CliIO,
): Promise<number> {
  const run = aca.run(id);
  if ((await run.status()) === 'RUNNING' && !flags.wait) {
    const snapshot = await run.state();
    io.out(
      flags.json
        ? jsonForTerminal(snapshot)
        : printableLine(`${id} has not ended yet: ${snapshot.paused ? 'PAUSED' : snapshot.state}`),
    );
    return EXIT.success;
  }
  const result = await run.result();
  const care = await reviewWithCareOf(run, result);
  if (flags.json) {
    io.out(jsonForTerminal({ ...result, reviewWithCare: 'risks' in care ? care.risks : null }));
  } else {
    for (const line of summaryLines(result, aca.webUrl(id))) io.out(line);
    if ('risks' in care) for (const line of reviewWithCareLines(care.risks)) io.out(line);
    else io.out(`Review with care: could not be read (${printableLine(care.error)})`);
  }
  return exitCodeFor(result);
}

/**
 * The run's "Review with care" list, or why it could not be read: a run that never got a commit
 * has none, and its commits may be out of reach (a store that does not answer). The outcome is
 * printed all the same.
 */
async function reviewWithCareOf(
  run: AcaRun,
  result: RunResult,
): Promise<{ risks: ReviewRisk[] } | { error: string }> {
  if (!result.place || !result.baseCommit) return { risks: [] };
  try {
    return { risks: await run.reviewRisks(result) };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

export async function listCommand(
  aca: AcaClient,
  flags: { json?: boolean; state?: ListedState; parent?: string },
  io: CliIO,
): Promise<number> {
  const rows = await aca.list({
    ...(flags.state !== undefined ? { state: flags.state } : {}),
    ...(flags.parent !== undefined ? { parent: flags.parent } : {}),
  });
  const marked = rows.map((r) => ({ ...r, discarded: aca.run(r.workflowId).discardedAt() !== null }));
  if (flags.json) {
    io.out(jsonForTerminal(marked));
    return EXIT.success;
  }
  if (!rows.length) {
    io.out('no runs found');
    return EXIT.success;
  }
  io.out(
    [
      'STARTED'.padEnd(20),
      'STATE'.padEnd(11),
      'ITER'.padEnd(5),
      'PASS'.padEnd(5),
      'LANG'.padEnd(11),
      'ID',
    ].join(' '),
  );
  for (const r of marked) {
    io.out(
      printableLine(
        [
          r.startTime.slice(0, 19).replace('T', ' ').padEnd(20),
          listedState(r).padEnd(11),
          String(r.iteration).padEnd(5),
          (testedYet(r) ? formatPassRate(r.passRate) : '-').padEnd(5),
          r.language.padEnd(11),
          `${r.workflowId}${r.parentRun ? ` (from ${r.parentRun})` : ''}${r.discarded ? ' [discarded]' : ''}`,
        ].join(' '),
      ),
    );
  }
  return EXIT.success;
}

/** A run Temporal stopped without letting it end (terminated, timed out) shows as that, not as the state it last published. */
function listedState(row: RunSummary): string {
  return endedWithoutResult(row.status) ? row.status : row.state;
}

/**
 * Whether a listed run has finished a test run: the AgentPassRate search attribute reads 0 until
 * then (a search attribute has no "none"), which is no pass rate at all.
 */
function testedYet(r: { iteration: number; state: string }): boolean {
  if (r.iteration === 0) return false;
  return !(r.iteration === 1 && ['INIT', 'PLANNING', 'CODING', 'TESTING'].includes(r.state));
}

/** `aca log <id>`: the run as plain text, from the history of each of its executions. */
export async function logCommand(aca: AcaClient, id: string, io: CliIO): Promise<number> {
  const run = aca.run(id);
  await run.status();
  // A run that continued as new has one history per execution; visibility lists them all.
  const executions: Array<{ runId: string; startTime: Date }> = [];
  for await (const execution of aca.temporal.workflow.list({
    query: `WorkflowId = '${id.replace(/'/g, "\\'")}'`,
  })) {
    executions.push({ runId: execution.runId, startTime: execution.startTime });
  }
  executions.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  const runIds = executions.length ? executions.map((e) => e.runId) : [undefined];
  const events = [];
  for (const runId of runIds) {
    const history = await aca.temporal.workflow.getHandle(id, runId).fetchHistory();
    events.push(...(history.events ?? []));
  }
  const snapshot = await run.state().catch(() => null);
  for (const line of renderRunLog(events, snapshot)) io.out(line);
  return EXIT.success;
}
