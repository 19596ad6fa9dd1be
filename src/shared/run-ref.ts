/**
 * References to what a run keeps outside workflow history (conversations, full test reports):
 * slash-separated segments of safe characters, such as `<workflow>/<run>/planner-1`. The file
 * stores turn a reference into a path under their folder and the Postgres stores use it as a key;
 * both accept exactly the same references, so a run can move between them.
 */
const SAFE_REF = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/** Returns `ref` when it is a valid reference; throws naming `what` (e.g. "conversation") otherwise. */
export function checkRunRef(ref: string, what: string): string {
  if (typeof ref !== 'string' || ref.length > 1000 || !SAFE_REF.test(ref) || ref.split('/').some(isDots))
    throw new Error(`invalid ${what} reference "${String(ref)}"`);
  return ref;
}

function isDots(segment: string): boolean {
  return segment === '.' || segment === '..';
}
