/**
 * Sandboxed test runner: runs a workspace's tests inside bubblewrap (or bare, with
 * ACA_SANDBOX=none) under resource limits and turns the runner's structured report into a
 * TestRunReport. aca's own pytest and Jest by default; for a user's repository its own Jest,
 * vitest, mocha, `node --test` or test command line, with the repository's dependency folders
 * (.venv, node_modules) mounted read-only (select-runner.ts, dependency-folders.ts).
 */
export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './launch/limits';
export { runTestSuite, type RunTestsOptions } from './run-test-suite';
export { lendWorkspace, lendWorkspaceContents, releaseWorkspace } from './workspace/workspace-ownership';
export { checkSandboxAvailable, type SandboxAvailability } from './launch/availability';
export { detectTestCommand, findDependencyFolders } from './runners/detect-test-command';
export { MAX_DEPENDENCY_FOLDERS } from './workspace/dependency-folders';
