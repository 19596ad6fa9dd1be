/**
 * A small error hierarchy. Each error says whose fault it was, because that decides
 * what happens next: user errors exit 2, model-behaviour errors go back to the model,
 * system errors are retried by Temporal.
 */
export class AcaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Bad input from the person at the keyboard or from configuration. */
export class UserInputError extends AcaError {}

/** The model asked for something invalid; the answer goes back to the model. */
export class ModelBehaviorError extends AcaError {}

/** Something on our side or a dependency failed; usually worth retrying. */
export class SystemError extends AcaError {}

/** Temporal or the database cannot be reached (the CLI's exit code 3). */
export class UnreachableError extends AcaError {}

/** No run has this id (or the workflow with it is not an aca run). */
export class RunNotFoundError extends UserInputError {
  constructor(
    readonly runId: string,
    message = `unknown run id "${runId}"`,
  ) {
    super(message);
  }
}

/** The run is not in a state that allows what was asked: ended, already paused, not paused. */
export class RunStateError extends UserInputError {
  constructor(
    readonly runId: string,
    message: string,
  ) {
    super(message);
  }
}

/** `discard` without `force` of a run whose changes were never applied. */
export class UnappliedChangesError extends RunStateError {
  constructor(
    runId: string,
    readonly files: number,
    readonly appliable: boolean,
  ) {
    super(
      runId,
      `run ${runId} changed ${files} file${files === 1 ? '' : 's'} that ${appliable ? `${files === 1 ? 'was' : 'were'} never applied (aca apply ${runId} brings them in)` : `exist${files === 1 ? 's' : ''} only in its workspace`}; aca discard ${runId} --force throws them away`,
    );
  }
}

/** A task (or a linked run's instruction) longer than MAX_TASK_BYTES: refused before anything starts. */
export class TaskTooLargeError extends UserInputError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `the task is ${bytes} bytes, over the limit of ${limit} (${limit / 1024} KiB); put long material (logs, specifications) in a file of the repository and name that file in the task`,
    );
  }
}
