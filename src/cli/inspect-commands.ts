import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { AcaConfig } from '../config';
import type { RunSnapshot } from '../shared/run-types';
import {
  AgentIterationKey,
  AgentLanguageKey,
  AgentPassRateKey,
  AgentStateKey,
} from '../shared/search-attributes';
import { UserInputError } from '../shared/errors';
import { EXIT, existingRun, type CliIO } from './cli-context';
import { formatPassRate, summaryLines } from './progress';
import { attachToRun, exitCodeFor, runLink } from './run-command';
import { feedbackUpdate, pauseSignal, resumeSignal, RUN_WORKFLOW_TYPE, stateQuery } from './run-handle';

/** The run's snapshot: from the live workflow when it runs, from its result when it has ended. */
async function snapshotOf(client: Client, id: string): Promise<RunSnapshot> {
  const { handle, status } = await existingRun(client, id);
  if (status === 'RUNNING') return await handle.query(stateQuery);
  try {
    const result = await handle.result();
    return { ...result, paused: false };
  } catch (err) {
    throw new UserInputError(`run ${id} ended without a result (${status}): ${(err as Error).message}`);
  }
}

export async function statusCommand(
  client: Client,
  id: string,
  flags: { json?: boolean },
  io: CliIO,
): Promise<number> {
  const s = await snapshotOf(client, id);
  if (flags.json) {
    io.out(JSON.stringify(s));
    return EXIT.success;
  }
  io.out(`${s.workflowId}: ${s.paused ? 'PAUSED' : s.state}${s.reason ? ` (${s.reason})` : ''}`);
  io.out(
    `  iteration ${s.iterations}/${s.maxIterations}, pass rate ${formatPassRate(s.passRate)}, paused: ${s.paused ? 'yes' : 'no'}`,
  );
  if (s.warning) io.out(`  warning: ${s.warning}`);
  if (s.lastAnalysis) {
    io.out(`  last analysis: ${s.lastAnalysis.rootCause}`);
    io.out(`  fix hypothesis: ${s.lastAnalysis.fixHypothesis}`);
  }
  if (s.error) io.out(`  last error: ${s.error}`);
  return EXIT.success;
}

export async function watchCommand(
  client: Client,
  config: AcaConfig,
  id: string,
  io: CliIO,
): Promise<number> {
  await existingRun(client, id);
  return attachToRun(client, config, id, io, { json: false, interruptPauses: false });
}

export async function pauseResumeCommand(
  client: Client,
  id: string,
  io: CliIO,
  action: 'pause' | 'resume',
): Promise<number> {
  const { handle, status } = await existingRun(client, id);
  if (status !== 'RUNNING')
    throw new UserInputError(`run ${id} has ended (${status}); it cannot be ${action}d`);
  const snapshot = await handle.query(stateQuery);
  if (action === 'pause' && snapshot.paused) throw new UserInputError(`run ${id} is already paused`);
  if (action === 'resume' && !snapshot.paused) throw new UserInputError(`run ${id} is not paused`);
  await handle.signal(action === 'pause' ? pauseSignal : resumeSignal);
  io.out(action === 'pause' ? `Paused ${id} (it was ${snapshot.state}).` : `Resumed ${id}.`);
  return EXIT.success;
}

export async function feedbackCommand(client: Client, id: string, text: string, io: CliIO): Promise<number> {
  if (!text.trim()) throw new UserInputError('the feedback text is empty');
  const { handle, status } = await existingRun(client, id);
  const ended = () => new UserInputError(`run ${id} has ended; feedback goes only to a running run`);
  if (status !== 'RUNNING') throw ended();
  try {
    const answer = await handle.executeUpdate(feedbackUpdate, { args: [text] });
    io.out(`Feedback delivered to ${id}; the next Coder turn receives it (${answer.pending} pending).`);
    return EXIT.success;
  } catch (err) {
    // The run may end between the look-up and the update.
    if (err instanceof WorkflowNotFoundError) throw ended();
    if (err instanceof WorkflowUpdateFailedError) {
      throw new UserInputError(
        `feedback rejected: ${(err.cause as Error | undefined)?.message ?? err.message}`,
      );
    }
    throw err;
  }
}

export async function cancelCommand(client: Client, id: string, io: CliIO): Promise<number> {
  const { handle, status } = await existingRun(client, id);
  if (status !== 'RUNNING') throw new UserInputError(`run ${id} has already ended (${status})`);
  await handle.cancel();
  io.out(`Cancellation of ${id} requested.`);
  return EXIT.success;
}

export async function resultCommand(
  client: Client,
  config: AcaConfig,
  id: string,
  flags: { json?: boolean; wait: boolean },
  io: CliIO,
): Promise<number> {
  const { handle, status } = await existingRun(client, id);
  if (status === 'RUNNING' && !flags.wait) {
    const snapshot = await handle.query(stateQuery);
    io.out(
      flags.json
        ? JSON.stringify(snapshot)
        : `${id} has not ended yet: ${snapshot.paused ? 'PAUSED' : snapshot.state}`,
    );
    return EXIT.success;
  }
  const result = await handle.result();
  if (flags.json) io.out(JSON.stringify(result));
  else for (const line of summaryLines(result, runLink(config, id))) io.out(line);
  return exitCodeFor(result);
}

export async function listCommand(
  client: Client,
  flags: { json?: boolean; state?: string },
  io: CliIO,
): Promise<number> {
  let query = `WorkflowType = '${RUN_WORKFLOW_TYPE}'`;
  // Checked against AGENT_STATES by the command line before it gets here.
  if (flags.state !== undefined) query += ` AND AgentState = '${flags.state}'`;
  const rows: Array<{
    workflowId: string;
    state: string;
    iteration: number;
    passRate: number | null;
    language: string;
    startTime: string;
    status: string;
  }> = [];
  for await (const wf of client.workflow.list({ query, pageSize: 100 })) {
    const sa = wf.typedSearchAttributes;
    rows.push({
      workflowId: wf.workflowId,
      state: sa.get(AgentStateKey) ?? '-',
      iteration: sa.get(AgentIterationKey) ?? 0,
      passRate: sa.get(AgentPassRateKey) ?? null,
      language: sa.get(AgentLanguageKey) ?? '-',
      startTime: wf.startTime.toISOString(),
      status: wf.status.name,
    });
    if (rows.length >= 200) break;
  }
  rows.sort((a, b) => b.startTime.localeCompare(a.startTime));
  if (flags.json) {
    io.out(JSON.stringify(rows));
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
  for (const r of rows) {
    io.out(
      [
        r.startTime.slice(0, 19).replace('T', ' ').padEnd(20),
        r.state.padEnd(11),
        String(r.iteration).padEnd(5),
        formatPassRate(r.passRate).padEnd(5),
        r.language.padEnd(11),
        r.workflowId,
      ].join(' '),
    );
  }
  return EXIT.success;
}
