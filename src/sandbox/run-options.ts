import type { DependencyFolder, TestCommandSpec } from '../shared/test-command';
import type { TestEnv } from '../shared/test-env';
import type { Language, SandboxMode } from '../shared/types';
import type { SandboxLimits } from './launch/limits';
import type { AcceptanceFiles } from './verdicts/acceptance';
import type { BaseTests } from './verdicts/base-tests';

/** What one test run is asked to do (runTestSuite). */
export interface RunTestsOptions {
  /** Folder with the code and tests; the only host folder the tests may write. */
  workspace: string;
  /**
   * The host's network inside the sandbox: only for a setup command the user explicitly allowed
   * it (`--setup-network`), never for tests.
   */
  network?: boolean;
  language: Language;
  mode: SandboxMode;
  limits?: Partial<SandboxLimits>;
  /** Called while the suite runs (a Temporal activity heartbeat), every `heartbeatEveryMs`. */
  heartbeat?: () => void;
  /** Default: DEFAULT_HEARTBEAT_EVERY_MS (launch/process-tree.ts). */
  heartbeatEveryMs?: number;
  /** Aborting kills the whole process tree; runTestSuite then rejects with an AbortError. */
  signal?: AbortSignal;
  /** Workspace-relative test files to run instead of discovering them. */
  testPaths?: string[];
  /** The user's acceptance tests: protected in the sandbox, and each must run and pass. */
  acceptance?: AcceptanceFiles;
  /**
   * The repository's tests as a trusted commit has them, judged in the verdict process from those
   * versions (pytest only; see verdicts/base-tests.ts).
   */
  baseTests?: BaseTests;
  /**
   * What runs the tests (see test-command.ts); absent: aca's own runners, pytest on Debian's
   * interpreter for Python and aca's Jest otherwise.
   */
  command?: TestCommandSpec;
  /**
   * The repository's dependency folders (not in the worktree): mounted read-only at their place in
   * the workspace, their commands first on PATH. Without a sandbox they are used where they are.
   */
  dependencies?: DependencyFolder[];
  /** The repository's own variables (see launch/repository-env.ts); absent: none. */
  env?: TestEnv;
}
