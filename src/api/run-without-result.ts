/**
 * A run Temporal ended without letting it finish: terminated (`temporal workflow terminate`, or
 * by Temporal itself when a payload was over its limit), timed out, or failed outside aca's own
 * handling. Such a run has no result and answers no query, so what `aca status` shows and what
 * `aca discard` removes are read from its history: its input, where its work tree and branch
 * were made, and the state it last published.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import type { AcaConfig } from '../config';
import { discoverRepository, git, changedFilesBetween, runBranch } from '../repo';
import type { RunGit, RunInput, RunSnapshot } from '../shared/run-types';
import { safeKey } from '../shared/safe-key';
import { AgentIterationKey, AgentPassRateKey, AgentStateKey } from '../shared/search-attributes';
import { AGENT_STATES, LISTED_WAITING, type AgentState } from '../shared/types';
import { completedActivities, decodePayload, type HistoryEvent } from './history-payloads';

/** Temporal's statuses of a run that ended without a result of aca's. */
export const ENDED_WITHOUT_RESULT = ['TERMINATED', 'TIMED_OUT', 'FAILED', 'CANCELLED'] as const;
export type EndedWithoutResult = (typeof ENDED_WITHOUT_RESULT)[number];

export function endedWithoutResult(status: string): status is EndedWithoutResult {
  return (ENDED_WITHOUT_RESULT as readonly string[]).includes(status);
}

interface FromHistory {
  input: RunInput | null;
  /** The run's git directories and branch as its prepareRun step (or a later adoptRun) recorded them. */
  git: RunGit | null;
  branch: string | null;
  baseCommit: string | null;
  /** Why the newest execution ended, in Temporal's words. */
  reason: string | null;
}

/** Reads a run's executions, newest first, for what a snapshot without result needs. */
async function readHistory(client: Client, id: string, runId: string): Promise<FromHistory> {
  const found: FromHistory = { input: null, git: null, branch: null, baseCommit: null, reason: null };
  let next: string | undefined = runId;
  let newest = true;
  while (next) {
    const events: HistoryEvent[] = (await client.workflow.getHandle(id, next).fetchHistory()).events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes;
    found.input ??= decodePayload(started?.input?.payloads?.[0]) as RunInput | null;
    if (newest) found.reason = endingReason(events);
    // The newest adoption wins over the preparation: the run's files moved to that host.
    for (const step of completedActivities(events).reverse()) {
      const result = step.result as { git?: RunGit; branch?: string; baseCommit?: string } | undefined;
      if (!result?.git) continue;
      if (step.type === 'adoptRun') found.git ??= result.git;
      if (step.type === 'prepareRun') {
        found.git ??= result.git;
        found.branch ??= result.branch ?? null;
        found.baseCommit ??= result.baseCommit ?? null;
      }
    }
    next = started?.continuedExecutionRunId || undefined;
    newest = false;
  }
  return found;
}

/** Why the execution ended, in Temporal's words: a termination's reason, or the failure's message. */
function endingReason(events: HistoryEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    const terminated = event.workflowExecutionTerminatedEventAttributes;
    if (terminated) return terminated.reason || null;
    if (event.workflowExecutionTimedOutEventAttributes) return 'the run exceeded its time limit';
    const failed = event.workflowExecutionFailedEventAttributes;
    if (failed) return failed.failure?.message || null;
    if (event.workflowExecutionCanceledEventAttributes) return 'cancelled before aca could end it';
  }
  return null;
}

/**
 * Where the run's work tree and branch are when its history does not say (the run was stopped
 * while its preparation was under way): where the preparing host puts them, for this host's
 * ACA_HOME and ACA_WORKSPACES. Only what git knows as the run's is ever removed from there (see
 * discardRun), so a guess that finds nothing removes nothing.
 */
async function expectedGit(id: string, input: RunInput, config: AcaConfig): Promise<RunGit | null> {
  const workTree = input.workspace ?? path.join(config.workspacesRoot, safeKey(id));
  if (input.repo) {
    try {
      const { commonDir } = await discoverRepository(input.repo.path);
      return { gitDir: commonDir, commonDir, workTree };
    } catch {
      return null;
    }
  }
  const gitDir = path.join(config.home, 'git', `${safeKey(id)}.git`);
  return fs.existsSync(path.join(gitDir, 'HEAD')) ? { gitDir, commonDir: gitDir, workTree } : null;
}

/** The snapshot of a run that ended without a result (see endedWithoutResult). */
export async function snapshotWithoutResult(
  client: Client,
  description: WorkflowExecutionDescription,
  config: AcaConfig,
): Promise<RunSnapshot> {
  const id = description.workflowId;
  const found = await readHistory(client, id, description.runId);
  const input = found.input;
  const git = found.git ?? (input ? await expectedGit(id, input, config) : null);
  const branch = found.branch ?? (git ? runBranch(id) : null);
  const baseCommit = found.baseCommit ?? input?.repo?.baseCommit ?? null;
  const head = git && branch ? await branchTip(git, branch) : null;
  const changedFiles =
    git && baseCommit && head ? await changedFilesBetween(git, baseCommit, head).catch(() => []) : [];
  const sa = description.typedSearchAttributes;
  const status = description.status.name as EndedWithoutResult;
  const words = status === 'TIMED_OUT' ? 'timed out' : status.toLowerCase();
  return {
    workflowId: id,
    state: publishedState(sa.get(AgentStateKey)),
    reason: null,
    iterations: sa.get(AgentIterationKey) ?? 0,
    maxIterations: input?.options.maxIterations ?? 0,
    passRate: sa.get(AgentPassRateKey) ?? null,
    tests: { passed: 0, failed: 0, errors: 0 },
    workspace: git?.workTree ?? '',
    files: [],
    tokens: { prompt: 0, completion: 0 },
    transitions: [],
    paused: false,
    waiting: null,
    warning: null,
    lastAnalysis: null,
    error: `${words} by Temporal${found.reason ? `: ${found.reason}` : ''}`,
    repo: input?.repo?.path ?? null,
    branch,
    baseCommit,
    headCommit: head,
    changedFiles,
    baseline: null,
    regressions: [],
    targets: [],
    failingTests: [],
    unknownTargets: [],
    attempts: [],
    cost: null,
    parentRun: input?.link?.parentRun ?? null,
    git,
    testCommand: null,
    ended: { status, reason: found.reason },
  };
}

/** The state the run last published; one waiting at its limit was REFLECTING (see LISTED_WAITING). */
function publishedState(value: string | undefined): AgentState {
  if (value === LISTED_WAITING) return 'REFLECTING';
  return (AGENT_STATES as readonly string[]).includes(value ?? '') ? (value as AgentState) : 'INIT';
}

/** The commit the run's branch points at, or null when it is gone (or never made). */
async function branchTip(runGit: RunGit, branch: string): Promise<string | null> {
  const target = { gitDir: runGit.commonDir };
  try {
    const tip = await git(target, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], {
      allowExitCodes: [1],
    });
    return tip.trim() || null;
  } catch {
    return null;
  }
}
