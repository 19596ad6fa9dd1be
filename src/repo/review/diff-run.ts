import type { RunPlace } from '../../shared/run-types';
import { UserInputError } from '../../shared/errors';
import { git, gitBytes, type GitTarget } from '../git/git';
import { isCommit } from '../git/objects';

/**
 * The changes a run made, `base`..`head`, as a unified diff, or with `stat` one line per file
 * with its counts and a total. Read from the shared git directory, so it works while the run's
 * worktree exists and after it is gone, as long as the commits are there.
 */
export async function diffRun(
  place: Pick<RunPlace, 'commonDir'>,
  base: string,
  head: string,
  options: { stat?: boolean } = {},
): Promise<string> {
  const { target, args } = await diffCall(place, base, head, options);
  return git(target, args);
}

/** diffRun's output as git wrote it, byte for byte (file content need not be UTF-8). */
export async function diffRunBytes(
  place: Pick<RunPlace, 'commonDir'>,
  base: string,
  head: string,
  options: { stat?: boolean } = {},
): Promise<Buffer> {
  const { target, args } = await diffCall(place, base, head, options);
  return gitBytes(target, args);
}

async function diffCall(
  place: Pick<RunPlace, 'commonDir'>,
  base: string,
  head: string,
  options: { stat?: boolean },
): Promise<{ target: GitTarget; args: string[] }> {
  const target: GitTarget = { gitDir: place.commonDir };
  for (const commit of [base, head]) {
    if (!(await isCommit(target, commit))) {
      throw new UserInputError(
        `the run's commit ${commit} is not in ${place.commonDir} (was the run discarded?)`,
      );
    }
  }
  const args = [
    'diff',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    // A submodule commit the run records shows as its `Subproject commit <id>` line: apply takes it.
    '--ignore-submodules=none',
    '--submodule=short',
    // Wide enough that git does not shorten paths; the bars stay short.
    ...(options.stat ? ['--stat=1000,900', '--stat-graph-width=40'] : []),
    base,
    head,
    '--',
  ];
  return { target, args };
}
