/** What failure memory stores and answers, whatever database holds it (failure-repository.ts). */
import type { Language, Lesson } from '../shared/types';

export type TaskStatus = 'running' | 'success' | 'failed';

export interface NewTask {
  workflowId: string;
  task: string;
  language: Language;
}

export interface IterationRecord {
  workflowId: string;
  iteration: number;
  /** passed / (passed + failed), 0..1. */
  passRate: number;
  passed: number;
  failed: number;
}

export interface FailureRecord {
  workflowId: string;
  iteration: number;
  /** What kind of failure; part of the key, so one iteration can store e.g. a test failure and an error. */
  kind?: string;
  /** Raw test output; only its last LIMITS.testOutput characters are kept. */
  testOutput: string;
  rootCause: string;
  fixHypothesis: string;
  filesToChange: string[];
}

export interface FixRecord {
  workflowId: string;
  /** The iteration whose tests passed. */
  iteration: number;
  /** What changed between the last failure and success, in a sentence or two. */
  summary: string;
}

export interface SimilarOptions {
  /** How many lessons at most (default 3). */
  limit?: number;
  /** Characters per lesson across its text fields (default 800). */
  maxChars?: number;
  /** The asking run's own workflow id: its own failures are not lessons from the past. */
  excludeWorkflowId?: string;
  /** The current error text, if any, matched against past outputs and analyses too. */
  errorText?: string;
  /** Lessons scoring below this are left out (default 0.1; scores are 0..1). */
  minScore?: number;
}

/** One stored failure as `aca memory search` shows it. */
export interface PastFailure {
  workflowId: string;
  iteration: number;
  kind: string;
  task: string;
  language: string;
  status: TaskStatus;
  rootCause: string;
  fixHypothesis: string;
  filesToChange: string[];
  fix: string | null;
  score: number;
  createdAt: string;
}

export interface FailureMemory {
  /** Which database this is, for logs and `aca memory search` (never includes a password). */
  readonly description: string;
  createTask(task: NewTask): Promise<void>;
  updateTaskStatus(workflowId: string, status: TaskStatus, reason?: string | null): Promise<void>;
  logIteration(record: IterationRecord): Promise<void>;
  storeFailure(record: FailureRecord): Promise<void>;
  /** Stores what fixed a run; returns how many of that run's failures it now explains. */
  recordFix(record: FixRecord): Promise<number>;
  findSimilarFailures(taskText: string, options?: SimilarOptions): Promise<Lesson[]>;
  search(text: string, limit?: number): Promise<PastFailure[]>;
  close(): Promise<void>;
}

export const DEFAULT_FAILURE_KIND = 'test_failure';
