import type { TargetResult } from '../shared/targets';
import type { AgentRole, Analysis, Language, Lesson, Plan } from '../shared/types';

/** Everything an agent turn starts from. Travels through workflow history, so it stays small. */
export interface TurnContext {
  role: AgentRole;
  task: string;
  language: Language;
  /** The coding attempt this turn belongs to (1-based). */
  attempt: number;
  maxIterations: number;
  plan?: Plan | null;
  analysis?: Analysis | null;
  feedback?: string[];
  lessons?: Lesson[];
  /** For the Tester: 1 on the first pass, more after an analysis said the tests were wrong. */
  testPass?: number;
  /** For the Reflector: the stored report of the failed test run. */
  testReportRef?: string | null;
  protectedPaths: string[];
  /** Tests that passed on the base commit and fail (or are gone) after the last attempt. */
  regressions?: string[];
  /** What runs the tests, when it is the project's own command rather than aca's runner. */
  testCommand?: string | null;
  /** Tests that must pass for the run to succeed, with how each fared in the last test run. */
  targets?: TargetResult[];
  /** What the run itself tells the Coder (a target the Planner named that does not exist). */
  notes?: string[];
  /**
   * For the Planner: the tests that fail on the base commit (the first names, and how many in all),
   * which the run may leave failing unless the plan names them as targets.
   */
  baselineFailures?: { names: string[]; count: number };
  /** A continued run: the run it goes on from, that run's task verbatim and what it did. */
  earlier?: { run: string; task: string; done: string | null };
  /**
   * The run's base commit, where the project's instructions (AGENTS.md and the like) are read:
   * never a commit of the run's own, so nothing an agent wrote instructs the next one.
   */
  baseCommit?: string;
  /** The files and folders the plan names: the AGENTS.md of each of their folders is added. */
  planFiles?: string[];
  /** The user's own instructions for the run (`--instructions`). */
  instructions?: UserInstructions;
}

/**
 * `--instructions` as a turn receives it: a long text only as far as the instructions' budget
 * could show it (each turn's input is kept in workflow history), and the whole text's length.
 */
export interface UserInstructions {
  text: string;
  chars: number;
}

/** What opening a turn takes: the conversation's reference, its model and workspace, its context. */
export interface OpenTurnInput {
  ref: string;
  model: string;
  workspace: string;
  context: TurnContext;
  /**
   * The Planner's turn: look up lessons from similar past failures as the turn opens (they
   * become part of its conversation, so a retried step never looks them up again).
   */
  recallLessons?: { workflowId: string; task: string };
  /** Whether the run lets its agents run commands (`.aca.json`); absent: yes. */
  runCommand?: boolean;
}

/** What the project's instructions of a turn are read from (see TurnSources.projectInstructions). */
export interface InstructionsRequest {
  model: string;
  baseCommit: string;
  /** The files and folders of the plan; none for the Planner. */
  paths: string[];
  instructions: UserInstructions | null;
}
