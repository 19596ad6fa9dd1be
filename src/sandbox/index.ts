/**
 * Sandboxed test runner: runs a workspace's pytest or Jest suite inside
 * bubblewrap (or bare, with ACA_SANDBOX=none) under resource limits and turns
 * the runner's structured report into a TestRunReport. See README.md.
 */
export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './limits';
export { runTestSuite, type RunTestsOptions } from './run-test-suite';
export { checkSandboxAvailable, type SandboxAvailability } from './availability';
