// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types cannot be imported (ms-types.ts)
/// <reference path="./ms-types.ts" preserve="true" />
/**
 * aca's public API for scripts: start, steer and read runs. Everything exported from here (and
 * from `aca-agent/worker` and `aca-agent/workflows`) is public and follows semantic versioning; anything
 * reached by a path into the package is internal.
 */
export {
  AcaClient,
  AcaRun,
  RUN_WORKFLOW_TYPE,
  type ConnectOptions,
  type RunHandle,
  type RunSummary,
} from './aca-client';
export type { StartRunRequest } from './run-request';
export { loadConfig, type AcaConfig, type TemporalConnectionOptions } from '../config';
export {
  AcaError,
  RunNotFoundError,
  RunStateError,
  TaskTooLargeError,
  UnreachableError,
  UserInputError,
} from '../shared/errors';
export { MAX_TASK_BYTES } from '../shared/task-size';
export { readRunResult, runResultOfFailure } from '../shared/run-failure';
export { ApplyConflictError, ApplyNeedsConsentError, UncommittedChangesError } from '../repo';
export type { ApplyRunResult, DiscardRunResult, ReviewChange, ReviewRisk, ReviewRiskKind } from '../repo';
export type { RunInput, RunOptions, RunResult, RunSnapshot } from '../shared/run-types';
export type { TargetOutcome, TargetResult } from '../shared/targets';
export type { AgentState, Analysis, FailureReason, Language, Plan, Transition } from '../shared/types';
export { feedbackUpdate, pauseSignal, resumeSignal, stateQuery } from '../workflows/signals';
