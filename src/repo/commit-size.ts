import * as fs from 'node:fs';
import * as path from 'node:path';
import { AcaError } from '../shared/errors';
import { git, type GitTarget } from './git';

const MiB = 1024 * 1024;

/**
 * How much a step may add to the run's branch. The sandbox bounds what code under test writes on
 * disk, but not a file's apparent size: a sparse file of 64 MiB takes a few KiB of disk, and git
 * reads, hashes and compresses every byte of it (minutes and gigabytes for a hundred of them, on
 * the worker and again in the store). 100 MiB a file is the largest blob common git hosts take.
 */
export const COMMIT_LIMITS = { fileBytes: 100 * MiB, totalBytes: 512 * MiB } as const;

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
  // Untracked and modified files in one listing: one git process per commit, not two.
  const candidates = new Set(
    (await git(target, ['ls-files', '-z', '--others', '--modified', '--exclude-standard', '--', ...pathspec]))
      .split('\0')
      .filter(Boolean),
  );
  let total = 0;
  let largest = { path: '', bytes: 0 };
  for (const relative of candidates) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(path.join(target.workTree, relative));
    } catch {
      continue; // deleted since: git records it as gone
    }
    if (!stat.isFile()) continue;
    total += stat.size;
    if (stat.size > largest.bytes) largest = { path: relative, bytes: stat.size };
  }
  if (largest.bytes > limits.fileBytes || total > limits.totalBytes) {
    throw new WorkTreeTooLargeError(largest.path, largest.bytes, total, candidates.size, limits);
  }
}
