/**
 * Every failure type aca gives Temporal: the `type` of an ApplicationFailure an activity or the
 * workflow throws, and what retry policies list in `nonRetryableErrorTypes`. Both sides name a
 * type through this object, so a misspelt or renamed type fails to compile instead of silently
 * making a permanent failure retried (or the reverse). Workflow code imports it: plain data only.
 */
export const FAILURE_TYPES = {
  /** The model endpoint refused the request (bad key, bad request): retrying cannot help. */
  modelRequestRejected: 'ModelRequestRejected',
  modelRateLimited: 'ModelRateLimited',
  modelServerError: 'ModelServerError',
  modelTimeout: 'ModelTimeout',
  modelStreamIncomplete: 'ModelStreamIncomplete',
  modelUnreachable: 'ModelUnreachable',
  /** Failure memory could not be reached; the write waits in the background queue. */
  memoryUnavailable: 'MemoryUnavailable',
  /** Failure memory refused a statement: retrying cannot help. */
  memoryQueryError: 'MemoryQueryError',
  /** A run's request names something the worker cannot use (a missing tests folder, a taken branch). */
  badRunInput: 'BadRunInput',
  badEvalInput: 'BadEvalInput',
  workTreeTooLarge: 'WorkTreeTooLarge',
  gitStorePushRejected: 'GitStorePushRejected',
  gitStoreMissingCommit: 'GitStoreMissingCommit',
  gitStoreUnreachable: 'GitStoreUnreachable',
  workerDiskFull: 'WorkerDiskFull',
  /** The worker cannot sandbox test runs (no bubblewrap, no user namespaces). */
  sandboxUnavailable: 'SandboxUnavailable',
  /** A stored report the run needs (its baseline's) is not in the report store. */
  reportMissing: 'ReportMissing',
  /** A turn's conversation is not in this worker's conversation store (hosts without DATABASE_URL). */
  conversationMissing: 'ConversationMissing',
  /** An MCP server a tool call needs is down on the worker that took the call: worth retrying. */
  mcpServerUnavailable: 'McpServerUnavailable',
  /** The workflow found its own state impossible (a phase entered without what it needs). */
  runStateBroken: 'RunStateBroken',
  /** A signal or update asked for a move the state table forbids, or a move after the run ended. */
  forbiddenStateMove: 'ForbiddenStateMove',
  /**
   * A run that ended FAILED (cancelled included): the workflow fails with this type so Temporal
   * and its Web UI show it as failed; its details hold the run's RunResult (see run-failure.ts).
   */
  runFailed: 'AcaRunFailed',
} as const;

export type FailureType = (typeof FAILURE_TYPES)[keyof typeof FAILURE_TYPES];
