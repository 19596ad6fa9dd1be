/**
 * Sandboxed test runner: runs a workspace's tests inside bubblewrap (or bare, with
 * ACA_SANDBOX=none) under resource limits and turns the runner's structured report into a
 * TestRunReport. aca's own pytest and Jest by default; for a user's repository its own Jest,
 * vitest, mocha, `node --test` or test command line, with the repository's dependency folders
 * (.venv, node_modules) mounted read-only (runners/select-runner.ts, workspace/dependency-folders.ts).
 *
 * The one way into src/sandbox from the rest of aca, its tests and its benchmarks. Inside:
 * - run-test-suite.ts: one test run, start to verdict (run-options.ts: what it is asked; run-spec.ts:
 *   one process of it);
 * - launch/: starting and containing the test processes (bubblewrap, cgroups, rlimits, seccomp,
 *   the sandbox uid, the spawn helper, the runner folder mounted into the sandbox);
 * - runners/: which runner a project's tests take, its command line and how its report is read;
 * - verdicts/: judging a run against what the worker saw, and the acceptance tests' own verdict;
 *   verdicts/python, verdicts/js and runners/js hold the code aca runs in and beside the test
 *   process, as files of their own (shipped-files.ts);
 * - workspace/: lending the workspace to the sandbox uid and the project's dependency folders;
 * - command/: an agent's command line (run_command), started by the same launch path as a test
 *   run, its stdout and stderr kept apart and clipped.
 */
export { runTestSuite, type RunTestsOptions } from './run-test-suite';
export {
  ANSWER_HEAD_BYTES,
  ANSWER_TAIL_BYTES,
  MAX_COMMAND_CHARS,
  runAgentCommand,
  STORED_HEAD_BYTES,
  STORED_TAIL_BYTES,
  type AgentCommandOptions,
  type AgentCommandResult,
} from './command/run-agent-command';
export { clipText, cutMarker, HeadTailCapture } from './command/clip-output';
export type { BaseTests } from './verdicts/base-tests';
export { lendWorkspace, lendWorkspaceContents, releaseWorkspace } from './workspace/workspace-ownership';
export { MAX_DEPENDENCY_FOLDERS } from './workspace/dependency-folders';
export { detectTestCommand, findDependencyFolders } from './runners/detect-test-command';
export { PYTHON } from './runners/pytest-runner';
export {
  BARE_WARNING,
  checkSandboxAvailable,
  forgetSandboxProbe,
  type SandboxAvailability,
} from './launch/availability';
export { DEFAULT_SANDBOX_LIMITS, resolveLimits, withinMaximums, type SandboxLimits } from './launch/limits';
export { startSpawnHelper } from '../process';
export { findExecutable, isRoot } from './launch/tools';

// Parts exposed for their own tests (escape, parser and seccomp suites) and the sandbox benchmark.
export { bwrapTools } from './launch/availability';
export { bwrapCommand, type BwrapLaunchInput } from './launch/bwrap-launch';
export { acquireCgroupLauncher } from './launch/cgroup-launchers';
export { OutputTail } from './launch/output-tail';
export { DEFAULT_HEARTBEAT_EVERY_MS, runProcessTree, type ProcessRunOptions } from './launch/process-tree';
export { withRlimits } from './launch/rlimits';
export {
  isSandboxUid,
  pickSandboxUid,
  SANDBOX_UID_MIN,
  SANDBOX_UID_SPAN,
  parseSandboxUidPool,
  sandboxUidPool,
} from './launch/sandbox-user';
export {
  AUDIT_ARCH,
  compileDenyFilter,
  DENIED_SYSCALLS,
  evaluateFilter,
  SECCOMP_RESULT,
  seccompArchOf,
  type SeccompArch,
} from './launch/seccomp-filter';
export { spawnDirect, spawnViaHelper } from '../process';
export { parseJestReport } from './runners/jest-runner';
export { mochaCaseId } from './runners/mocha-runner';
export { nodeTestCaseId } from './runners/node-test-runner';
export { parseJunit } from './runners/pytest-runner';
export { declaredJestSkips } from './verdicts/jest-declared-skips';
export { parseJunitReport } from './verdicts/junit-cases';
export { readVerdictStream } from './verdicts/pytest-verdict-stream';
export { projectRoot } from './workspace/project-root';
export { SHIPPED_FILES, shippedFile, shippedFilePath, type ShippedFile } from './shipped-files';
export { withRepositoryEnv } from './launch/repository-env';
