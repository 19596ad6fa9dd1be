import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';
import { MAX_TARGETS, mergeTargets, targetFile, targetProblem } from '../../shared/targets';
import { git } from '../git/git';

/** Where a run's targets came from, for the message that names one. */
export interface TargetSources {
  /** `--target`, in the order given. */
  option: readonly string[];
  /** `.aca.json`'s `targets` at the base commit. */
  config: readonly string[];
}

/** Where the tests a run starts with are: a repository's base commit, or the `--tests` folder. */
export type TargetPlace =
  { repo: { commonDir: string; baseCommit: string; topLevel: string } } | { testsDir: string | null };

/**
 * The run's targets, checked before anything starts: each well formed, and its file present where
 * the run starts (a blob at the base commit; a file given with `--tests` for a run without a
 * repository). Whether the named test exists in that file is known only once the baseline has run.
 */
export async function checkTargets(sources: TargetSources, place: TargetPlace): Promise<string[]> {
  const targets = mergeTargets(sources.config, sources.option);
  const label = (id: string) => (sources.option.includes(id) ? `--target ${id}` : `.aca.json target ${id}`);
  for (const id of targets) {
    const problem = typeof id === 'string' ? targetProblem(id) : 'is not text';
    if (problem) throw new UserInputError(`--target "${String(id).slice(0, 200)}" ${problem}`);
  }
  if (targets.length > MAX_TARGETS) {
    throw new UserInputError(`at most ${MAX_TARGETS} targets, got ${targets.length}`);
  }
  for (const id of targets) {
    const file = targetFile(id);
    if ('repo' in place) {
      const { commonDir, baseCommit, topLevel } = place.repo;
      const kind = (
        await git({ gitDir: commonDir }, ['cat-file', '-t', `${baseCommit}:${file}`], {
          allowExitCodes: [128],
        })
      ).trim();
      if (kind !== 'blob') {
        throw new UserInputError(
          `${label(id)}: there is no file ${file} at the base commit ${baseCommit.slice(0, 10)} of ${topLevel}`,
        );
      }
    } else {
      const full = place.testsDir ? path.join(place.testsDir, file) : null;
      if (!full || !fs.existsSync(full) || !fs.lstatSync(full).isFile()) {
        throw new UserInputError(
          `${label(id)}: a run without --repo starts with no tests but the --tests files, and ${file} is not one of them`,
        );
      }
    }
  }
  return targets;
}
