/**
 * The workflow's input, its queryable snapshot and its result. Type-only
 * module shared by the workflow, the activities and the command line.
 */
import type { AgentState, Analysis, FailureReason, Language, TokenUsage, Transition } from './types';

export interface RunOptions {
  maxIterations: number;
  warnAt: number;
  maxTokens: number | null;
  /** Model calls one agent turn may make before the turn fails. */
  maxStepsPerTurn: number;
  /** Time one model call may take before the activity attempt times out. */
  modelTimeoutMs: number;
}

export interface RunInput {
  task: string;
  language: Language;
  /** Absolute path of the run's workspace on the worker's machine. */
  workspace: string;
  /** Folder of acceptance tests to copy into the workspace, read-only. */
  testsDir: string | null;
  model: string;
  options: RunOptions;
}

export interface RunSnapshot {
  workflowId: string;
  state: AgentState;
  reason: FailureReason | null;
  iterations: number;
  maxIterations: number;
  passRate: number | null;
  tests: { passed: number; failed: number; errors: number };
  workspace: string;
  files: string[];
  tokens: TokenUsage;
  transitions: Transition[];
  paused: boolean;
  warning: string | null;
  lastAnalysis: Analysis | null;
  error: string | null;
}

export type RunResult = Omit<RunSnapshot, 'paused'>;

export const DEFAULT_RUN_OPTIONS: RunOptions = {
  maxIterations: 15,
  warnAt: 12,
  maxTokens: null,
  maxStepsPerTurn: 12,
  modelTimeoutMs: 120_000,
};
