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
import type { RunInput, RunPlace, RunSnapshot } from '../shared/run-types';
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
  /** Where the run's files are, as its prepareRun step (or a later adoptRun) recorded it. */
  place: RunPlace | null;
  baseCommit: string | null;
  /** Why the newest execution ended, in Temporal's words. */
  reason: string | null;
}

/** Reads a run's executions, newest first, for what a snapshot without result needs. */
async function readHistory(client: Client, id: string, runId: string): Promise<FromHistory> {
  const found: FromHistory = { input: null, place: null, baseCommit: null, reason: null };
  let next: string | undefined = runId;
  let newest = true;
  while (next) {
    const events: HistoryEvent[] = (await client.workflow.getHandle(id, next).fetchHistory()).events ?? [];
    const started = events[0]?.workflowExecutionStartedEventAttributes;
    found.input ??= decodePayload(started?.input?.payloads?.[0]) as RunInput | null;
    if (newest) found.reason = endingReason(events);
    // The newest adoption wins over the preparation: the run's files moved to that host.
    for (const step of completedActivities(events).reverse()) {
      if (step.type === 'adoptRun') found.place ??= (step.result as RunPlace | undefined) ?? null;
      if (step.type === 'prepareRun') {
        const prepared = step.result as { place?: RunPlace; baseCommit?: string } | undefined;
        found.place ??= prepared?.place ?? null;
        found.baseCommit ??= prepared?.baseCommit ?? null;
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
async function expectedPlace(id: string, input: RunInput, config: AcaConfig): Promise<RunPlace | null> {
  const workTree = input.workspace ?? path.join(config.workspacesRoot, safeKey(id));
  // The disk is not known; a snapshot's place only names files, it routes no step.
  const guessed = { workflowId: id, branch: runBranch(id), disk: '', workTree };
  if (input.repo) {
    try {
      const { commonDir } = await discoverRepository(input.repo.path);
      return { ...guessed, gitDir: commonDir, commonDir };
    } catch {
      return null;
    }
  }
  const gitDir = path.join(config.home, 'git', `${safeKey(id)}.git`);
  return fs.existsSync(path.join(gitDir, 'HEAD')) ? { ...guessed, gitDir, commonDir: gitDir } : null;
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
  const place = found.place ?? (input ? await expectedPlace(id, input, config) : null);
  const baseCommit = found.baseCommit ?? input?.repo?.baseCommit ?? null;
  const head = place ? await branchTip(place) : null;
  const changedFiles =
    place && baseCommit && head ? await changedFilesBetween(place, baseCommit, head).catch(() => []) : [];
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
    workspace: place?.workTree ?? '',
    files: [],
    tokens: { prompt: 0, completion: 0 },
    transitions: [],
    paused: false,
    waiting: null,
    warning: null,
    lastAnalysis: null,
    error: `${words} by Temporal${found.reason ? `: ${found.reason}` : ''}`,
    repo: input?.repo?.path ?? null,
    branch: place?.branch ?? null,
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
    place,
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
async function branchTip(place: RunPlace): Promise<string | null> {
  const { branch } = place;
  const target = { gitDir: place.commonDir };
  try {
    const tip = await git(target, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], {
      allowExitCodes: [1],
    });
    return tip.trim() || null;
  } catch {
    return null;
  }
}
