import type { RunContext } from './run-context';

/**
 * Commits what a Coder or Tester turn changed on the run's branch, a step of its own on the host's
 * files queue. Its commit id (null: the turn changed nothing) goes into history with the step's
 * result, so any later step can name the files of any attempt. The step is named by the turn,
 * unique within the run, so a retry recognises a push its first try made.
 */
export async function commitTurn(
  run: RunContext,
  role: 'coder' | 'tester',
  turnKey: string,
  summary: string | undefined,
): Promise<void> {
  if (!run.hostStep()) return;
  const iteration = run.record.iterations;
  await run.whenNotPaused();
  const commit = await run.onHost((host) =>
    host.files.commitTurn.executeWithOptions(
      { summary: `git · commit ${role} turn of attempt ${iteration}` },
      [
        {
          ...run.hostStep()!,
          message: commitMessage(iteration, role, summary),
          step: turnKey,
          execution: run.execution,
        },
      ],
    ),
  );
  run.recordCommit(commit);
}

/** `aca: attempt 2, coder: <the turn's summary>`: one line, as git log shows it. */
function commitMessage(iteration: number, role: 'coder' | 'tester', summary: string | undefined): string {
  const line =
    (summary ?? '')
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? '';
  const text = line ? line.slice(0, 120) : `${role} turn without a summary`;
  return `aca: attempt ${iteration}, ${role}: ${text}`;
}
