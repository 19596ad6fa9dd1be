/**
 * The workflow's input, its queryable snapshot and its result. Type-only
 * module shared by the workflow, the activities and the command line.
 */
import type { TargetResult } from './targets';
import type { TestEnv } from './test-env';
import type { DependencyFolder, ProjectLimits, TestCommandSpec } from './test-command';
import type {
  AgentRole,
  AgentState,
  Analysis,
  FailureReason,
  Language,
  Plan,
  TokenUsage,
  Transition,
} from './types';

export interface RunOptions {
  maxIterations: number;
  warnAt: number;
  maxTokens: number | null;
  /** `--max-cost`: dollars the run's model calls may cost, at the model's prices. */
  maxCostUsd: number | null;
  /** Model calls one agent turn may make before the turn fails. */
  maxStepsPerTurn: number;
  /** Time one model call may take before the activity attempt times out. */
  modelTimeoutMs: number;
  /** At the iteration limit: end FAILED, or wait for `aca extend` (`--on-limit ask`). */
  onLimit: 'fail' | 'ask';
  /** How long a run waits at its limit for `aca extend` before it ends FAILED `max_iterations`. */
  askTimeoutMs: number;
  /**
   * How long a step of the run's host may wait to start before the host counts as gone and, with
   * a git store, another host adopts the run. Absent: what the preparing host's
   * ACA_HOST_START_TIMEOUT says.
   */
  hostStartTimeoutMs?: number;
}

export interface RunInput {
  task: string;
  language: Language;
  /**
   * `--workspace`: a folder on the host that prepares the run. Absent: that host decides (a new
   * folder under its workspaces root); the run's snapshot says where.
   */
  workspace?: string;
  /** Folder of acceptance tests to copy into the workspace, read-only. */
  testsDir: string | null;
  model: string;
  options: RunOptions;
  /** A `--repo` run: the user's repository and the commit the run starts from; null for a fresh repository. */
  repo: RepoInput | null;
  /** `--test-cmd`; null: `testCommand` of `.aca.json`, else detected. */
  testCommand: string | null;
  /** `--setup-cmd`; null: `setupCommand` of `.aca.json`, else none. */
  setupCommand: string | null;
  /** Whether the setup command may reach the network (`--setup-network`, warned about). */
  setupNetwork: boolean;
  /** A run started from an earlier run's state (`aca continue`, `retry`, `fork`); null otherwise. */
  link: RunLink | null;
  /**
   * Tests that must pass for the run to succeed, whatever the baseline said (`--target` and
   * `.aca.json`'s `targets`); the Planner may add more. Absent: none named.
   */
  targets?: string[];
  /**
   * Failure memory: false (`--no-failure-memory`, and every run of `aca eval`) neither recalls lessons
   * nor stores the run's failures. Absent: on.
   */
  failureMemory?: boolean;
  /** Sandbox limits given for this run (`--memory`, `--wall-time`), over `.aca.json`'s. */
  limits?: ProjectLimits;
  /** The repository's own variables for its setup command and tests (`aca eval --specs`); see test-env.ts. */
  testEnv?: TestEnv;
  /**
   * `--instructions FILE`: the user's own instructions, added to every agent's first message after
   * the repository's (AGENTS.md and the like). Absent: none. A linked run keeps its parent's.
   */
  instructions?: string;
}

/** What a linked run takes over from the run it came from. */
export interface RunLink {
  kind: 'continue' | 'retry' | 'fork';
  parentRun: string;
  /** The earlier run's task, verbatim: the agents of a continued run see it beside the instruction. */
  parentTask: string;
  /** The commit the new run's work tree starts from (its base stays the earlier run's base). */
  startCommit: string;
  /** Where that commit is: the earlier run's place. */
  parentPlace: RunPlace;
  /** The earlier run's base commit. */
  baseCommit: string;
  plan: Plan | null;
  /** The analysis of the last attempt taken over, for the next Coder. */
  analysis: Analysis | null;
  /** Attempts taken over: the new run's first attempt is this plus one. */
  attemptsBefore: number;
  /** What the earlier run changed and how it ended, in a few lines, for a continued run's agents. */
  done: string | null;
  /** The earlier run's baseline (a `--repo` run): reused, the base commit being the same. */
  baseline: { ref: string; summary: BaselineSummary } | null;
  /** `aca fork --feedback`: guidance for the new run's first Coder turn. */
  feedback: string | null;
}

export interface RepoInput {
  /** The repository's top-level folder (the user's working tree). */
  path: string;
  /** The commit the run starts from, resolved when the run was requested. */
  baseCommit: string;
  /**
   * A run of an `aca eval` batch: `path` names the batch's repository copy, and the host that
   * prepares the run works in its own copy of it (made from the git store when it has none).
   */
  evalCopy?: true;
}

/**
 * Where a run's files are: the host that has them and, there, the run's git directories, work tree
 * and branch. Made when the run is prepared and again by a host that adopts the run; every step
 * that reads or changes the files is given it with the commit it starts from, and `aca diff`,
 * `apply`, `discard` and a linked run reach the run's commits through it.
 */
export interface RunPlace {
  workflowId: string;
  /** The run's branch, `aca/<workflowId>`. */
  branch: string;
  /** The disk id of the host that has the files (see host-runs.ts); its task queues are named after it. */
  disk: string;
  /** The git directory aca runs git with for this run (a worktree's own, or the run's repository's). */
  gitDir: string;
  /** The git directory shared by the repository and its worktrees: where branches and objects are. */
  commonDir: string;
  workTree: string;
}

export interface ChangedFile {
  path: string;
  status: 'added' | 'modified' | 'deleted';
  added: number;
  removed: number;
}

export interface AttemptRecord {
  iteration: number;
  /** The commit whose tests were run. */
  commit: string;
  passRate: number;
}

/** What the test command gave on the base commit, before any agent ran. */
export interface BaselineSummary {
  passed: number;
  failed: number;
}

/** How the run's tests are run, decided at INIT; see test-command.ts. */
export interface RunTestSetup {
  command: TestCommandSpec;
  dependencies: DependencyFolder[];
  limits: ProjectLimits;
  /** The repository's own variables (RunInput.testEnv); absent: none. */
  env?: TestEnv;
}

export interface RunCost {
  usd: number;
  byAgent: Record<AgentRole, number>;
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
  /** `"limit"` while the run waits at its iteration limit for `aca extend` (`--on-limit ask`). */
  waiting: 'limit' | null;
  warning: string | null;
  lastAnalysis: Analysis | null;
  error: string | null;
  repo: string | null;
  branch: string | null;
  baseCommit: string | null;
  headCommit: string | null;
  changedFiles: ChangedFile[];
  baseline: BaselineSummary | null;
  /** Tests that passed at the baseline and now fail or have disappeared. */
  regressions: string[];
  /** The run's targets and how each fared in the last test run (the baseline's before any attempt). */
  targets: TargetResult[];
  /** Tests failing in the last test run, by name (the first 50), excused ones too. */
  failingTests: string[];
  /** Targets given to the run that no test of the base commit belongs to: the run ended at once. */
  unknownTargets: string[];
  attempts: AttemptRecord[];
  /** What the model calls cost, in all and per agent; null while the model has no known price. */
  cost: RunCost | null;
  parentRun: string | null;
  /** Where the run's files are, once prepared (for `aca diff`, `apply`, `discard`). */
  place: RunPlace | null;
  /** What runs the tests, once decided (its label, for people). */
  testCommand: string | null;
  /**
   * Present when Temporal ended the run without letting it finish (terminated, timed out): its
   * status then and why; the rest of the snapshot is what the run's history still tells.
   */
  ended?: { status: 'TERMINATED' | 'TIMED_OUT' | 'FAILED' | 'CANCELLED'; reason: string | null };
}

export type RunResult = Omit<RunSnapshot, 'paused' | 'waiting'>;

export const DEFAULT_RUN_OPTIONS: RunOptions = {
  maxIterations: 15,
  warnAt: 12,
  maxTokens: null,
  maxCostUsd: null,
  maxStepsPerTurn: 12,
  modelTimeoutMs: 120_000,
  onLimit: 'fail',
  askTimeoutMs: 24 * 60 * 60_000,
};
