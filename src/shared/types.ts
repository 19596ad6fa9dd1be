/**
 * Plain data types shared by the workflow, the activities and the command line.
 * This file must stay free of runtime imports: the workflow bundle includes it.
 */

export const AGENT_STATES = [
  'INIT',
  'PLANNING',
  'CODING',
  'TESTING',
  'REFLECTING',
  'SUCCESS',
  'FAILED',
  'PAUSED',
] as const;
export type AgentState = (typeof AGENT_STATES)[number];

/** What the AgentState search attribute says of a run waiting at its iteration limit. */
export const LISTED_WAITING = 'WAITING';
/** Every value the AgentState search attribute takes, for `aca list --state`. */
export const LISTED_STATES = [...AGENT_STATES, LISTED_WAITING] as const;
export type ListedState = (typeof LISTED_STATES)[number];

export const LANGUAGES = ['python', 'typescript', 'javascript'] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * Why a run FAILED. `environment`: the tests could not run at all on the base commit (a limit hit,
 * the runner missing, a crash before any test, an unreadable report); no model was asked anything.
 */
export type FailureReason = 'max_iterations' | 'budget' | 'cancelled' | 'error' | 'environment';

export type AgentRole = 'planner' | 'coder' | 'tester' | 'reflector';

export type SandboxMode = 'bwrap' | 'none';

export interface Transition {
  from: AgentState;
  to: AgentState;
  at: string;
}

export interface TokenUsage {
  prompt: number;
  completion: number;
  /** Of the prompt tokens, those the provider served from its prompt cache (cheaper). */
  cached?: number;
  /** Of the completion tokens, those a reasoning model spent thinking (billed as completion). */
  reasoning?: number;
}

/** One test case as reported by the runner's structured report. */
export interface TestCaseResult {
  name: string;
  status: 'passed' | 'failed' | 'error' | 'skipped';
  message?: string;
}

/** What one sandboxed test run produced. `passRate` is passed / (passed + failed + errors). */
export interface TestRunReport {
  /**
   * `tampered`: the outcomes streamed during the run, the report and the exit status disagree.
   * `limit_exceeded`: the run went over a limit on its report or on what it left in the workspace.
   */
  outcome:
    | 'completed'
    | 'timeout'
    | 'collection_error'
    | 'no_tests'
    | 'sandbox_error'
    | 'tampered'
    | 'limit_exceeded';
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  passRate: number;
  cases: TestCaseResult[];
  /** One line that says what went wrong, when something did. */
  message?: string;
  /**
   * Set when the run tested nothing because of where it ran rather than what the code does: the
   * runner or command missing, the runner crashing before any test or leaving no readable report,
   * a resource limit hit. Says what happened, in one line.
   */
  environment?: string;
  /** Tail of stdout and stderr, capped; `cutBytes` says how much was dropped in front. */
  output: string;
  cutBytes: number;
  durationMs: number;
  sandbox: SandboxMode;
}

/** The Planner's output, as submitted through `submit_plan`. */
export interface Plan {
  summary: string;
  steps: string[];
  files: string[];
  /** Existing tests the task names as having to pass; those found to exist become the run's targets. */
  targets?: string[];
}

/** The Reflector's output, as submitted through `submit_analysis`. */
export interface Analysis {
  rootCause: string;
  fixHypothesis: string;
  filesToChange: string[];
  testsWrong: boolean;
}

/**
 * What an agent's finishing call yields, by the tool that ended the turn: the Planner's plan, the
 * Coder's or Tester's summary, the Reflector's analysis.
 */
export type TurnFinish =
  | { tool: 'submit_plan'; plan: Plan }
  | { tool: 'finish'; summary: string }
  | { tool: 'submit_analysis'; analysis: Analysis };

/** A past failure retrieved from failure memory, given to the Planner as a lesson. */
export interface Lesson {
  task: string;
  rootCause: string;
  fixHypothesis: string;
  fix: string | null;
  similarity: number;
}
