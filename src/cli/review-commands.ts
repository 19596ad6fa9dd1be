/**
 * `aca diff`, `aca apply` and `aca discard`: looking at a run's changes, taking them, or throwing
 * them away. Refusals are typed errors (RunNotFoundError, RunStateError, UserInputError: exit 2;
 * ApplyConflictError: exit 1) that main() prints as one line.
 */
import type { AcaClient } from '../api/aca-client';
import { printableBytes, printableLine } from '../shared/terminal-text';
import { UnappliedChangesError } from '../shared/errors';
import { EXIT, type CliIO } from './cli-context';
import { reviewWithCareLines } from './review-with-care';
import { cutLongLines, MAX_SHOWN_LINE_CHARS } from '../shared/shown-lines';
import type { ApplyAllowances } from '../repo';

export const DIFF_HELP = `
Prints the run's changes against the commit it started from, as a unified diff. With --stat, one
line per changed file with its counts, then a total, then under "Review with care" what the diff
cannot show or what acts beyond the code beside it: binary files, links and where they point,
submodules, .gitmodules, .gitattributes, .aca.json, test runner configuration (conftest.py, pytest
settings, jest.config.*, package.json, babel configuration), Python start-up files
(sitecustomize.py, usercustomize.py, *.pth), folders laid out as a git directory, files in the
folder your core.hooksPath names, and files with a line too long to show. Works on a running run
too, up to its last commit.

Control and invisible characters in the diff (an escape sequence that would erase a line on the
screen, a bidi override, a zero-width character, a byte that is not UTF-8) are shown as \\x1b,
\\u202e, \\x9b escapes, and a note on stderr says how many lines carry them. With --raw the diff
is printed byte for byte as git wrote it: pipe that to \`git apply\`. A line over ${MAX_SHOWN_LINE_CHARS} characters
is shown cut, with how much is left out (a note on stderr says how many lines were cut; --stat
names their files under "Review with care"); --raw prints it whole.`;

export const APPLY_HELP = `
Brings the changes of an ended --repo run onto the branch checked out in its repository, as one
commit whose message is the task's first line and the run's id and branch. The run's branch and
worktree stay (aca discard removes them).

Refused (exit 2), changing nothing: tracked files with uncommitted changes (untracked files are
fine), a detached HEAD (check out the branch to apply to first), a merge or rebase in progress,
a run still going, a run without --repo.
Conflicts (exit 1), changing nothing: the run and the branch changed the same lines, or an
untracked or ignored file is where the run adds one. A run that changed nothing applies nothing.
No hook, filter or merge driver of the repository runs.
Refused too (exit 2, changing nothing), naming each file: links that point outside the repository
or into a git directory (the repository's .git under any spelling, or a folder laid out as one;
--allow-links applies them) and new binary files, or text files turned binary (--allow-binary
applies them), and .gitattributes files the run adds or changes, whose line endings, encodings
and ident rules make git write files otherwise than the diff shows them (--allow-attributes
applies them). What was applied that needs a look is listed under "Review with care" (see
aca diff --help).`;

export const DISCARD_HELP = `
Removes what an ended run left: for a --repo run its worktree and its branch aca/<id> (your
checkout and other branches stay as they are); for a run without --repo its workspace folder and
its own git directory. Already removed parts are skipped.

Changes never applied (every change of a run without --repo) are only thrown away after a yes at
the terminal, or with --force; without a terminal and without --force, nothing is removed (exit 2).
The run is then marked discarded in aca list and aca status, and aca diff says so.`;

/** Prints text that ends in a newline without adding an empty line. */
function printBlock(io: CliIO, text: string): void {
  if (text) io.out(text.replace(/\n$/, ''));
}

export async function diffCommand(
  aca: AcaClient,
  id: string,
  flags: { stat?: boolean; raw?: boolean },
  io: CliIO,
): Promise<number> {
  const run = aca.run(id);
  const diff = await run.diffBytes({ stat: flags.stat === true });
  if (!diff.length) {
    io.err(`run ${id} has changed nothing yet`);
    return EXIT.success;
  }
  if (flags.raw) {
    if (io.outBytes) io.outBytes(diff);
    else process.stdout.write(diff);
    return EXIT.success;
  }
  const shown = printableBytes(diff);
  const { text, cut } = cutLongLines(shown.text);
  const escaped = shown.escaped;
  printBlock(io, text);
  if (flags.stat) for (const line of reviewWithCareLines(await run.reviewRisks())) io.out(line);
  if (escaped) {
    // On stderr, so that a pipe gets the diff alone.
    io.err(
      `${escaped} line${escaped === 1 ? ' carries' : 's carry'} control or invisible characters, shown as \\x.. or \\u.... escapes; aca diff --raw prints them as they are`,
    );
  }
  if (cut) {
    io.err(
      `${cut} line${cut === 1 ? ' is' : 's are'} over ${MAX_SHOWN_LINE_CHARS} characters and shown cut; aca diff --raw prints ${cut === 1 ? 'it' : 'them'} whole`,
    );
  }
  return EXIT.success;
}

export async function applyCommand(
  aca: AcaClient,
  id: string,
  io: CliIO,
  flags: ApplyAllowances = {},
): Promise<number> {
  const result = await aca.run(id).apply(flags);
  if (!result.applied) {
    io.out(
      printableLine(
        result.reason === 'run-changed-nothing'
          ? `Run ${id} changed nothing; nothing applied.`
          : `The changes of run ${id} are already on ${result.branch}; nothing applied.`,
      ),
    );
    return EXIT.success;
  }
  const count = result.files.length;
  io.out(
    printableLine(
      `Applied run ${id} to ${result.branch} as ${result.commit.slice(0, 12)} (${count} file${count === 1 ? '' : 's'}).`,
    ),
  );
  for (const line of reviewWithCareLines(result.reviewWithCare, false)) io.out(line);
  return EXIT.success;
}

export async function discardCommand(
  aca: AcaClient,
  id: string,
  flags: { force?: boolean },
  io: CliIO,
): Promise<number> {
  const run = aca.run(id);
  let removed;
  try {
    removed = await run.discard({ force: flags.force === true });
  } catch (err) {
    if (!(err instanceof UnappliedChangesError) || !io.confirm) throw err;
    const files = `${err.files} changed file${err.files === 1 ? '' : 's'}`;
    const were = err.files === 1 ? 'was' : 'were';
    if (
      !(await io.confirm(
        `Run ${id}'s ${files} ${were} never applied. Discard ${err.files === 1 ? 'it' : 'them'}?`,
      ))
    ) {
      io.err(`Nothing discarded.`);
      return EXIT.badInput;
    }
    removed = await run.discard({ force: true });
  }
  const parts = [
    removed.workTree && `workspace ${removed.workTree}`,
    removed.branch && `branch ${removed.branch}`,
    removed.gitDir && `git directory ${removed.gitDir}`,
    removed.store && `its branch in the git store ${removed.store}`,
  ].filter((part): part is string => Boolean(part));
  io.out(
    printableLine(
      parts.length ? `Discarded run ${id}: removed ${parts.join(', ')}.` : `Run ${id} was discarded already.`,
    ),
  );
  return EXIT.success;
}
