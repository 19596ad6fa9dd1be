/** The innermost message of a failure chain: an activity failure wraps what really went wrong. */
export function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let message = err.message;
  let cause = (err as { cause?: unknown }).cause;
  while (cause instanceof Error) {
    message = cause.message || message;
    cause = (cause as { cause?: unknown }).cause;
  }
  return message;
}
