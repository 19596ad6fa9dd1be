import * as fs from 'node:fs';
import * as path from 'node:path';
import { AcaError } from '../../shared/errors';
import { readRegularFile } from '../../shared/regular-file';
import { gitBytes, type GitTarget } from '../git/git';
import { walkSmallTree } from './small-tree';

const MiB = 1024 * 1024;

/**
 * How much a step may add to the run's branch. The sandbox bounds what code under test writes on
 * disk, but not a file's apparent size: a sparse file of 64 MiB takes a few KiB of disk, and git
 * reads, hashes and compresses every byte of it (minutes and gigabytes for a hundred of them, on
 * the worker and again in the store). 100 MiB a file is the largest blob common git hosts take.
 */
export const COMMIT_LIMITS = { fileBytes: 100 * MiB, totalBytes: 512 * MiB } as const;

/**
 * How much larger than on disk a file may be by the time git hashes it. A `working-tree-encoding`
 * attribute (which a `.gitattributes` the code under test wrote can set) has git convert the file
 * to UTF-8 first: a byte of a single-byte encoding can become three (CP1252's 0x80 is U+20AC), and
 * of the encodings glibc's iconv knows, only TSCII grows more, one byte to as many as twelve.
 */
const ENCODING_GROWTH = 3;
const MAX_ENCODING_GROWTH = 12;

function growthOf(encoding: string): number {
  return encoding.toUpperCase().replace(/[^A-Z0-9]/g, '') === 'TSCII' ? MAX_ENCODING_GROWTH : ENCODING_GROWTH;
}

/** A work tree of at most this many entries is sized by a walk of its own rather than by git. */
const UNLISTED_TREE_ENTRIES = 2_000;
const SLASH = Buffer.from('/');
const NUL = Buffer.from([0]);

/** A step's changes too large to commit: the run ends, since retrying cannot shrink them. */
export class WorkTreeTooLargeError extends AcaError {
  constructor(
    readonly largestPath: string,
    readonly largestBytes: number,
    readonly totalBytes: number,
    readonly files: number,
    readonly limits: { fileBytes: number; totalBytes: number },
  ) {
    const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
    super(
      largestBytes > limits.fileBytes
        ? `the work tree holds ${largestPath} of ${mib(largestBytes)}, over the ${mib(limits.fileBytes)} a committed file may have; nothing was committed`
        : `the work tree's ${files} new or changed files come to ${mib(totalBytes)}, over the ${mib(limits.totalBytes)} one step may commit (the largest: ${largestPath}, ${mib(largestBytes)}); nothing was committed`,
    );
  }
}

/**
 * Refuses, before `git add` reads any file, a step whose new and changed files (as git would add
 * them: untracked but not ignored, or tracked with a changed stat) are too large. Only names and
 * stat data are read, so the check costs the same for a sparse file as for a small one.
 */
export async function checkCommitSize(
  target: GitTarget & { workTree: string },
  pathspec: string[],
  limits: { fileBytes: number; totalBytes: number } = COMMIT_LIMITS,
): Promise<void> {
  if (fitsUnlisted(target, limits)) return;
  // Untracked files, and tracked ones whose stat data changed: `git add` hashes both, including a
  // file rewritten with its old content (which `ls-files --modified` would hash only to leave it
  // out). Names are kept as bytes: one that is not UTF-8, decoded, would name no file (or another).
  const [untracked, changed] = await Promise.all([
    gitBytes(target, ['ls-files', '-z', '--others', '--exclude-standard', '--', ...pathspec]),
    gitBytes(target, ['diff-files', '-z', '--name-only', '--', ...pathspec]),
  ]);
  const candidates = new Set(
    [...splitNul(untracked), ...splitNul(changed)]
      .filter((name) => name.length > 0)
      .map((name) => name.toString('latin1')),
  );
  const top = Buffer.from(target.workTree);
  const sizes = new Map<string, number>();
  for (const name of candidates) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(Buffer.concat([top, SLASH, Buffer.from(name, 'latin1')]));
    } catch {
      continue; // deleted since: git records it as gone
    }
    if (stat.isFile()) sizes.set(name, stat.size);
  }
  const fits = (growth: (name: string) => number) => {
    let total = 0;
    let largest = { path: '', bytes: 0 };
    for (const [name, size] of sizes) {
      const bytes = size * growth(name);
      total += bytes;
      if (bytes > largest.bytes) largest = { path: name, bytes };
    }
    return { total, largest, ok: largest.bytes <= limits.fileBytes && total <= limits.totalBytes };
  };
  let sized = fits(() => MAX_ENCODING_GROWTH);
  if (!sized.ok) {
    // Only now can an encoding decide: ask git which files have one.
    const encoded = await encodedFiles(target, [...sizes.keys()]);
    sized = fits((name) => encoded.get(name) ?? 1);
  }
  const { total, largest } = sized;
  if (!sized.ok) {
    const shown = Buffer.from(largest.path, 'latin1').toString('utf8');
    throw new WorkTreeTooLargeError(shown, largest.bytes, total, candidates.size, limits);
  }
}

/**
 * The files (as latin1 keys of their bytes) git converts from a `working-tree-encoding` before
 * hashing them, with how much each may grow: any value but unspecified, unset and set (which git
 * ignores) counts.
 */
async function encodedFiles(
  target: GitTarget & { workTree: string },
  names: string[],
): Promise<Map<string, number>> {
  const encoded = new Map<string, number>();
  if (names.length === 0) return encoded;
  const answer = splitNul(
    await gitBytes(
      target,
      ['check-attr', '-z', '--stdin', 'working-tree-encoding'],
      Buffer.concat(names.flatMap((name) => [Buffer.from(name, 'latin1'), NUL])),
    ),
  );
  // Triples of path, attribute, value.
  for (let i = 0; i + 2 < answer.length; i += 3) {
    const value = answer[i + 2]!.toString('latin1');
    if (!['unspecified', 'unset', 'set'].includes(value)) {
      encoded.set(answer[i]!.toString('latin1'), growthOf(value));
    }
  }
  return encoded;
}

function splitNul(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let end = bytes.indexOf(0); end !== -1; end = bytes.indexOf(0, start)) {
    parts.push(bytes.subarray(start, end));
    start = end + 1;
  }
  parts.push(bytes.subarray(start));
  return parts;
}

/**
 * Whether every regular file of a small work tree (see walkSmallTree) fits the limits. What a
 * commit adds is among those files, so a tree that fits needs no git process to list it. False,
 * and git lists what it would add, for a tree of more entries than UNLISTED_TREE_ENTRIES, files
 * over the limits, anything the walk cannot read, and wherever a `.gitattributes` may give files
 * an encoding (one in the tree, or in git's index).
 */
function fitsUnlisted(
  target: GitTarget & { workTree: string },
  limits: { fileBytes: number; totalBytes: number },
): boolean {
  if (indexMayHoldAttributes(target.gitDir)) return false;
  let total = 0;
  return walkSmallTree(target.workTree, UNLISTED_TREE_ENTRIES, (name, stat) => {
    if (name.toString('latin1') === '.gitattributes') return false;
    if (!stat.isFile()) return true;
    total += stat.size;
    return stat.size <= limits.fileBytes && total <= limits.totalBytes;
  });
}

/** Bounds what indexMayHoldAttributes reads; a larger index leaves the sizing to git. */
const MAX_INDEX_BYTES = 16 * 1024 * 1024;

/**
 * Whether git's index may list a `.gitattributes`: git reads one from the index, too, where the
 * work tree's copy is gone (deleted in this step, or outside a sparse checkout). Index versions 2
 * and 3 hold each path whole; any other version, or an index that cannot be read, may.
 */
function indexMayHoldAttributes(gitDir: string): boolean {
  let index: Buffer | null;
  try {
    index = readRegularFile(path.join(gitDir, 'index'), { maxBytes: MAX_INDEX_BYTES, followLinks: false });
  } catch {
    return true;
  }
  if (index === null) return false;
  const version =
    index.length >= 8 && index.subarray(0, 4).toString('latin1') === 'DIRC' ? index.readUInt32BE(4) : 0;
  if (version !== 2 && version !== 3) return true;
  return index.includes('.gitattributes');
}
