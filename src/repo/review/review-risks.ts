/**
 * What in a run's changes a reviewer cannot judge from the diff, or that acts beyond the code it
 * sits beside: binary files ("Binary files differ" hides what they hold), links (and where they
 * point), submodules, git's own settings files, aca's project file, the test runners'
 * configuration (it decides what a passing run ran) and Python's start-up hooks (they run on
 * every interpreter start). `aca result`, `aca diff --stat` and `aca apply` list them under
 * "Review with care"; `aca apply` refuses new binaries, links out of the repository (or into a
 * git directory) and new or changed `.gitattributes` unless the user allows them.
 *
 * Everything is read from the commits through git (git.ts: no filter, driver or attribute file
 * of the run's runs), never from a work tree.
 */
import * as path from 'node:path';
import { UserInputError } from '../../shared/errors';
import { git, gitBytes, type GitTarget } from '../git/git';
import { hasLineTooLongToShow, MAX_SHOWN_LINE_CHARS } from '../../shared/shown-lines';
import { textKeepingBytes } from '../../shared/terminal-text';
import { gitDirectoryHolding } from '../git/embedded-git-dirs';
import { isInFolder, trackedHooksFolder } from '../git/hooks-folder';
import { commitTree, linkReach, type CommitTree, type LinkReach } from '../git/link-targets';
import { isCommit } from '../git/objects';

export type ReviewRiskKind =
  | 'binary'
  | 'link'
  | 'submodule'
  | 'gitmodules'
  | 'gitattributes'
  | 'aca-config'
  | 'test-config'
  | 'python-startup'
  | 'long-line'
  | 'git-directory'
  | 'git-hook';

/** The `aca apply` options that let in what its diff cannot show as it will be written. */
export type ApplyConsent = 'allow-binary' | 'allow-links' | 'allow-attributes';

export type ReviewChange = 'added' | 'modified' | 'deleted' | 'type-changed';

export interface ReviewRisk {
  path: string;
  kind: ReviewRiskKind;
  change: ReviewChange;
  /** Why it needs a look, in a few words. */
  note: string;
  /** For a link: its target as committed. */
  target?: string;
  /**
   * For a link: whether it resolves outside the repository's files (absolute, up past its top, or
   * into a git directory: the checkout's own `.git` or a folder laid out as one).
   */
  outside?: boolean;
  /** The `aca apply` option it needs to be applied; null when applying takes it without one. */
  needs: ApplyConsent | null;
}

const LINK_NOTES: Record<LinkReach, string> = {
  inside: 'a link within the repository',
  outside: 'a link pointing outside the repository',
  'git-dir': 'a link into a git directory (.git), outside the repository',
  hooks: 'a link into the folder core.hooksPath names, outside the repository',
};

/** Larger configuration files are flagged without being read for a section. */
const MAX_SCANNED_BYTES = 1024 * 1024;

const TEST_CONFIG_FILES = new Set(['conftest.py', 'pytest.ini', '.pytest.ini', 'package.json', '.babelrc']);
const TEST_CONFIG_PATTERNS = [
  /^jest\.config\.[cm]?[jt]s$/,
  /^jest\.config\.json$/,
  /^babel\.config\.[a-z]+$/,
  /^\.babelrc\.[a-z]+$/,
];
/** Files that configure pytest only when they hold its section. */
const PYTEST_SECTIONS: Record<string, RegExp> = {
  'pyproject.toml': /^\s*\[\s*tool\.pytest/m,
  'setup.cfg': /^\s*\[\s*tool:pytest\s*\]/m,
  'tox.ini': /^\s*\[\s*pytest\s*\]/m,
};

interface RawChange {
  /** The name as text, bytes that are not UTF-8 as U+DC80–DCFF (terminal-text.ts shows them as `\xNN`). */
  path: string;
  /** The name's bytes as a latin1 string: what git stores, for looking it up in a tree. */
  pathBytes: string;
  change: ReviewChange;
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
}

function textOfLatin1(bytes: string): string {
  return textKeepingBytes(Buffer.from(bytes, 'latin1'));
}

const STATUS: Record<string, ReviewChange> = { A: 'added', M: 'modified', D: 'deleted', T: 'type-changed' };

async function rawChanges(target: GitTarget, base: string, head: string): Promise<RawChange[]> {
  const out = await gitBytes(target, [
    'diff-tree',
    '-r',
    '-z',
    '--no-renames',
    '--no-ext-diff',
    base,
    head,
    '--',
  ]);
  const fields = out.toString('latin1').split('\0');
  const changes: RawChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const header = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])/.exec(fields[i]!);
    if (!header) continue;
    const [, oldMode, newMode, oldBlob, newBlob, status] = header;
    changes.push({
      path: textOfLatin1(fields[i + 1]!),
      pathBytes: fields[i + 1]!,
      change: STATUS[status!] ?? 'modified',
      oldMode: oldMode!,
      newMode: newMode!,
      oldBlob: oldBlob!,
      newBlob: newBlob!,
    });
  }
  return changes;
}

/**
 * Paths git's diff takes as binary on either side of `from`..`to` (a NUL in the first 8000
 * bytes; no attribute file of the run's is read), among `paths` when given, as latin1 bytes.
 * A name on the command line must be UTF-8: one that is not is never found binary before.
 */
async function binaryPaths(
  target: GitTarget,
  from: string,
  to: string,
  paths?: string[],
): Promise<Set<string>> {
  const out = await gitBytes(target, [
    'diff',
    '--numstat',
    '-z',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    '--ignore-submodules=all',
    from,
    to,
    '--',
    ...(paths ?? []).flatMap((file) => {
      const name = Buffer.from(file, 'latin1').toString('utf8');
      return Buffer.from(name, 'utf8').toString('latin1') === file ? [`:(literal)${name}`] : [];
    }),
  ]);
  const binary = new Set<string>();
  for (const record of out.toString('latin1').split('\0')) {
    const match = /^-\t-\t(.*)$/s.exec(record);
    if (match) binary.add(match[1]!);
  }
  return binary;
}

/** A blob larger than this is taken to hold a long line without being read. */
const MAX_LINE_SCANNED_BYTES = 32 * 1024 * 1024;

/**
 * The blobs among `blobs` that hold a line aca diff cuts (shown-lines.ts). Only a blob larger
 * than the bound can hold one, so the others are never read.
 */
async function blobsWithLongLines(target: GitTarget, blobs: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (blobs.length === 0) return found;
  const sizes = await gitBytes(
    target,
    ['cat-file', '--batch-check=%(objectname) %(objectsize)'],
    Buffer.from(`${blobs.join('\n')}\n`),
  );
  for (const line of sizes.toString('latin1').split('\n')) {
    const [blob, size] = line.split(' ');
    if (!blob || !(Number(size) >= MAX_SHOWN_LINE_CHARS / 4)) continue;
    if (
      Number(size) > MAX_LINE_SCANNED_BYTES ||
      hasLineTooLongToShow(await gitBytes(target, ['cat-file', 'blob', blob]))
    ) {
      found.add(blob);
    }
  }
  return found;
}

/** The empty tree's id in the repository's hash (SHA-1 or SHA-256). */
async function emptyTree(target: GitTarget): Promise<string> {
  return (await git(target, ['hash-object', '-t', 'tree', '/dev/null'])).trim();
}

async function blobText(target: GitTarget, blob: string): Promise<string | null> {
  if (/^0+$/.test(blob)) return '';
  const size = Number((await git(target, ['cat-file', '-s', blob])).trim());
  if (!(size <= MAX_SCANNED_BYTES)) return null;
  return (await gitBytes(target, ['cat-file', 'blob', blob])).toString('utf8');
}

function configKind(file: string): { kind: ReviewRiskKind; note: string } | 'pytest-section' | null {
  const name = path.posix.basename(file).toLowerCase();
  if (name === '.gitmodules')
    return { kind: 'gitmodules', note: 'submodule settings: URLs git may fetch from' };
  if (name === '.gitattributes')
    return {
      kind: 'gitattributes',
      note: 'git attributes: line endings, encodings, filters and drivers of the files git writes',
    };
  if (name === '.aca.json')
    return { kind: 'aca-config', note: "aca's project settings: test and setup commands" };
  if (name === 'sitecustomize.py' || name === 'usercustomize.py' || name.endsWith('.pth')) {
    return { kind: 'python-startup', note: 'runs at every Python start where it is on the path' };
  }
  if (TEST_CONFIG_FILES.has(name) || TEST_CONFIG_PATTERNS.some((pattern) => pattern.test(name))) {
    return { kind: 'test-config', note: 'test runner configuration: decides what the tests run' };
  }
  if (name in PYTEST_SECTIONS) return 'pytest-section';
  return null;
}

/**
 * The changes of `base`..`head` that need a reviewer's care, in path order; empty when none do.
 * A file may be listed under more than one kind (a binary `conftest.py`).
 */
export async function reviewRisks(
  target: GitTarget,
  base: string,
  head: string,
  /**
   * The commit whose tree links are resolved in, when not `head`: what `aca apply` is about to
   * write (the run's changes on the user's branch), where a folder of the user's may since have
   * become a link.
   */
  landing: string = head,
): Promise<ReviewRisk[]> {
  // Only full ids of commits present pass: none can be read as an option or a revision expression.
  for (const commit of [base, head]) {
    if (!(await isCommit(target, commit))) {
      throw new UserInputError(
        `the run's commit ${commit} is not in ${target.gitDir} (was the run discarded?)`,
      );
    }
  }
  const changes = await rawChanges(target, base, head);
  if (changes.length === 0) return [];
  const binary = await binaryPaths(target, base, head);
  // A changed binary is new when its old side was text: compared with nothing, only a binary old side shows as binary.
  const changedBinaries = changes
    .filter((c) => c.change === 'modified' && binary.has(c.pathBytes))
    .map((c) => c.pathBytes);
  const binaryBefore =
    changedBinaries.length > 0
      ? await binaryPaths(target, await emptyTree(target), base, changedBinaries)
      : new Set<string>();
  const shownAsText = (c: RawChange) =>
    c.change !== 'deleted' && /^1006[0-7]{2}$/.test(c.newMode) && !binary.has(c.pathBytes);
  const longLines = await blobsWithLongLines(target, [
    ...new Set(changes.filter(shownAsText).map((c) => c.newBlob)),
  ]);
  const risks: ReviewRisk[] = [];
  const tree: CommitTree = commitTree(target, landing);
  const hooksFolder = await trackedHooksFolder(target);
  const gitDirs = new Set<string>();
  for (const change of changes) {
    const gone = change.change === 'deleted';
    const gitDir = gone ? null : await gitDirectoryHolding(change.pathBytes, tree);
    if (gitDir !== null && !gitDirs.has(gitDir)) {
      gitDirs.add(gitDir);
      risks.push({
        path: textOfLatin1(gitDir),
        kind: 'git-directory',
        change: (await commitTree(target, base).isGitDirectory(gitDir.split('/'))) ? 'modified' : 'added',
        note: 'a folder laid out as a git directory: git run in it reads its config and hooks',
        needs: null,
      });
    }
    const isNew =
      change.change === 'added' ||
      change.oldMode === '120000' ||
      change.oldMode === '160000' ||
      (change.change === 'modified' && !binaryBefore.has(change.pathBytes));
    if (!gone && change.newMode === '120000') {
      const linkTarget = (await tree.readLink(change.pathBytes.split('/'))) ?? '';
      const reach = await linkReach(change.pathBytes, linkTarget, tree, hooksFolder);
      risks.push({
        path: change.path,
        kind: 'link',
        change: change.change,
        note: LINK_NOTES[reach],
        target: textOfLatin1(linkTarget),
        outside: reach !== 'inside',
        needs: reach === 'inside' ? null : 'allow-links',
      });
    } else if (!gone && change.newMode === '160000') {
      risks.push({
        path: change.path,
        kind: 'submodule',
        change: change.change,
        note: 'a submodule commit: apply records it, fetches nothing',
        needs: null,
      });
    } else if (!gone && binary.has(change.pathBytes)) {
      risks.push({
        path: change.path,
        kind: 'binary',
        change: change.change,
        note:
          change.change === 'modified'
            ? isNew
              ? 'a text file turned binary: the diff cannot show it'
              : 'a binary file: the diff cannot show it'
            : 'a new binary file: the diff cannot show it',
        needs: isNew ? 'allow-binary' : null,
      });
    }
    if (shownAsText(change) && longLines.has(change.newBlob)) {
      risks.push({
        path: change.path,
        kind: 'long-line',
        change: change.change,
        note: `a line over ${MAX_SHOWN_LINE_CHARS} characters: aca diff shows its start only (--raw shows it all)`,
        needs: null,
      });
    }
    if (!gone && hooksFolder !== null && isInFolder(change.path, hooksFolder)) {
      risks.push({
        path: change.path,
        kind: 'git-hook',
        change: change.change,
        note: `in core.hooksPath (${hooksFolder || '.'}): git runs it as a hook`,
        needs: null,
      });
    }
    const config = configKind(change.path);
    if (config === 'pytest-section') {
      const section = PYTEST_SECTIONS[path.posix.basename(change.path).toLowerCase()]!;
      const texts = await Promise.all([change.oldBlob, change.newBlob].map((blob) => blobText(target, blob)));
      if (texts.some((text) => text === null || section.test(text))) {
        risks.push({
          path: change.path,
          kind: 'test-config',
          change: change.change,
          note: 'pytest configuration: decides what the tests run',
          needs: null,
        });
      }
    } else if (config?.kind === 'gitattributes') {
      // git writes files as the attributes it finds as it checks them out, the new ones
      // included: line endings, encodings and `ident` make what lands on disk differ from the
      // blobs the diff showed. Taking one away only leaves the bytes as they are.
      risks.push({
        path: change.path,
        ...config,
        change: change.change,
        needs: gone ? null : 'allow-attributes',
      });
    } else if (config) {
      risks.push({ path: change.path, ...config, change: change.change, needs: null });
    }
  }
  return risks;
}

export interface ApplyAllowances {
  allowBinary?: boolean;
  allowLinks?: boolean;
  allowAttributes?: boolean;
}

/**
 * The risks `aca apply` refuses unless allowed: links out of the repository or into a git
 * directory, new binary files, git attribute files added or changed.
 */
export function risksNeedingConsent(risks: readonly ReviewRisk[], allowed: ApplyAllowances): ReviewRisk[] {
  return risks.filter(
    (risk) =>
      (risk.needs === 'allow-binary' && !allowed.allowBinary) ||
      (risk.needs === 'allow-links' && !allowed.allowLinks) ||
      (risk.needs === 'allow-attributes' && !allowed.allowAttributes),
  );
}
