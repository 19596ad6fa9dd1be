/**
 * A stand-in for `@temporalio/workflow`, for unit tests that run workflow code as plain functions
 * (`jest.mock('@temporalio/workflow', () => jest.requireActual('../helpers/workflow-fake'))`).
 *
 * Workflow code on a dev server runs inside the SDK's sandbox (a webpack bundle in its own vm
 * context), out of reach of a mutation tool's switches and of line coverage; here it runs in the
 * test's own context, so every decision it makes is a plain call the test can pin. What it does
 * not model (replay, history, timers of a real server) stays with test/workflows and test/replay.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  ChildWorkflowFailure,
  RetryState,
  TimeoutFailure,
} from '@temporalio/common';

export { ActivityCancellationType, ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure };

// Activity stubs answer with whatever the test needs.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Stub = (...args: any[]) => unknown;

export interface ActivityCall {
  name: string;
  /** The step's summary as the Web UI shows it (executeWithOptions), if it was given one. */
  summary: string | undefined;
  args: unknown[];
  /** The task queue of the proxy the call went through (undefined: the workflow's own). */
  taskQueue: string | undefined;
}

interface Handler {
  handler: Stub;
  validator?: Stub;
}

/** The run of the workflow code under test: its activities, messages and what it showed. */
export const fake = {
  activities: {} as Record<string, Stub>,
  calls: [] as ActivityCall[],
  /** Every proxyActivities call's options, in order. */
  proxies: [] as Array<Record<string, unknown>>,
  handlers: new Map<string, Handler>(),
  details: [] as string[],
  searchAttributes: [] as Array<Array<{ key: { name: string }; value: unknown }>>,
  metrics: [] as Array<{ name: string; value: number; attributes: unknown }>,
  /** Each counter the code created: name, unit and description. */
  counters: [] as Array<[string, string | undefined, string | undefined]>,
  logs: [] as Array<{ level: string; message: string; attrs: unknown }>,
  info: {
    workflowId: 'wf-1',
    runId: 'run-1',
    firstExecutionRunId: 'first-run',
    taskQueue: 'coding-agent',
    continueAsNewSuggested: false,
    historyLength: 10,
  },
  /** Bumped by reset: conditions of an earlier test stop waiting. */
  generation: 0,
};

/** A fresh workflow with these activity stubs. */
export function resetWorkflowFake(activities: Record<string, Stub>): void {
  fake.activities = activities;
  fake.calls = [];
  fake.proxies = [];
  fake.handlers = new Map();
  fake.details = [];
  fake.searchAttributes = [];
  fake.metrics = [];
  fake.counters = [];
  fake.logs = [];
  fake.info = {
    workflowId: 'wf-1',
    runId: 'run-1',
    firstExecutionRunId: 'first-run',
    taskQueue: 'coding-agent',
    continueAsNewSuggested: false,
    historyLength: 10,
  };
  fake.generation += 1;
}

/** Sends a signal the workflow set a handler for. */
export function signal(name: string, ...args: unknown[]): void {
  const h = fake.handlers.get(name);
  if (!h) throw new Error(`no handler for signal ${name}`);
  h.handler(...args);
}

/** Runs an update as the server does: its validator, then its handler. */
export function update(name: string, ...args: unknown[]): unknown {
  const h = fake.handlers.get(name);
  if (!h) throw new Error(`no handler for update ${name}`);
  h.validator?.(...args);
  return h.handler(...args);
}

export function query(name: string): unknown {
  const h = fake.handlers.get(name);
  if (!h) throw new Error(`no handler for query ${name}`);
  return h.handler();
}

/** What the server does with an activity's error: the workflow sees an ActivityFailure. */
function asActivityFailure(name: string, err: unknown): unknown {
  if (err instanceof ActivityFailure || err instanceof CancelledFailure) return err;
  const cause = err instanceof Error ? err : new Error(String(err));
  return new ActivityFailure(
    'Activity task failed',
    name,
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    'stub',
    cause,
  );
}

const MAX_CALLS = 500;
/** Longest a condition without a timeout may wait before the test is taken to hang. */
const MAX_WAIT_MS = 5_000;

async function callActivity(
  name: string,
  summary: string | undefined,
  args: unknown[],
  taskQueue: string | undefined,
): Promise<unknown> {
  fake.calls.push({ name, summary, args, taskQueue });
  // A workflow gone round in circles (a mutant's endless loop) fails its test instead of hanging it.
  if (fake.calls.length > MAX_CALLS)
    throw new Error(`more than ${MAX_CALLS} activity calls: a runaway workflow`);
  const stub = fake.activities[name];
  if (!stub) throw asActivityFailure(name, new Error(`no stub for activity ${name}`));
  await Promise.resolve();
  try {
    return await stub(...args);
  } catch (err) {
    throw asActivityFailure(name, err);
  }
}

export function proxyActivities<T>(options: Record<string, unknown>): T {
  fake.proxies.push(options);
  return activityProxy<T>(options.taskQueue as string | undefined);
}

function activityProxy<T>(taskQueue: string | undefined): T {
  return new Proxy(
    {},
    {
      get: (_target, name) => {
        const activity = (...args: unknown[]) => callActivity(String(name), undefined, args, taskQueue);
        activity.executeWithOptions = (opts: { summary?: string }, args: unknown[]) =>
          callActivity(String(name), opts.summary, args, taskQueue);
        return activity;
      },
    },
  ) as T;
}

function durationMs(d: number | string): number {
  if (typeof d === 'number') return d;
  const m = /^(\d+)(ms|s|m)$/.exec(d);
  if (!m) throw new Error(`unsupported duration ${d}`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'];
}

/** Polls the predicate on the event loop: the workflow's handlers and activities run in between. */
export async function condition(fn: () => boolean, timeout?: number | string): Promise<boolean | void> {
  const generation = fake.generation;
  const limit = timeout === undefined ? undefined : durationMs(timeout);
  const start = Date.now();
  for (;;) {
    if (fake.generation !== generation) throw new Error('the test that started this workflow is over');
    if (fn()) return limit === undefined ? undefined : true;
    if (limit !== undefined && Date.now() - start >= limit) return false;
    if (limit === undefined && Date.now() - start >= MAX_WAIT_MS)
      throw new Error('a condition waited too long');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

export function workflowInfo() {
  return fake.info;
}

export const allHandlersFinished = (): boolean => true;

/** Thrown where the SDK would end the execution and start the next with these arguments. */
export class ContinuedAsNew extends Error {
  constructor(readonly args: unknown[]) {
    super('continued as new');
  }
}

export function continueAsNew(...args: unknown[]): Promise<never> {
  return Promise.reject(new ContinuedAsNew(args));
}

export function isCancellation(err: unknown): boolean {
  return (
    err instanceof CancelledFailure ||
    ((err instanceof ActivityFailure || err instanceof ChildWorkflowFailure) && isCancellation(err.cause))
  );
}

export const CancellationScope = {
  nonCancellable<T>(fn: () => Promise<T>): Promise<T> {
    return fn();
  },
};

const logAt =
  (level: string) =>
  (message: string, attrs?: unknown): void => {
    fake.logs.push({ level, message, attrs });
  };

export const log = {
  trace: logAt('trace'),
  debug: logAt('debug'),
  info: logAt('info'),
  warn: logAt('warn'),
  error: logAt('error'),
};

export const metricMeter = {
  createCounter: (name: string, unit?: string, description?: string) => {
    if (!fake.counters.some(([n]) => n === name)) fake.counters.push([name, unit, description]);
    return { add: (value: number, attributes?: unknown) => fake.metrics.push({ name, value, attributes }) };
  },
};

export function setCurrentDetails(details: string): void {
  fake.details.push(details);
}

export function upsertSearchAttributes(attrs: Array<{ key: { name: string }; value: unknown }>): void {
  fake.searchAttributes.push(attrs);
}

export const defineSignal = (name: string) => ({ name, type: 'signal' });
export const defineQuery = (name: string) => ({ name, type: 'query' });
export const defineUpdate = (name: string) => ({ name, type: 'update' });

export function setHandler(def: { name: string }, handler: Stub, options?: { validator?: Stub }): void {
  fake.handlers.set(def.name, { handler, ...(options?.validator ? { validator: options.validator } : {}) });
}

export function executeChild(): never {
  throw new Error('child workflows are not faked');
}

export function getExternalWorkflowHandle(): never {
  throw new Error('external workflow handles are not faked');
}
