/**
 * The repository's dependency folders (`.venv`, `venv`, `node_modules`): ignored by git, so not in
 * the run's worktree, and mounted read-only into the sandbox at their place in the workspace.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DependencyFolder } from '../../shared/test-command';

/** The folders looked for at a repository's root, in the order they go on PATH. */
export const DEPENDENCY_FOLDER_NAMES = ['.venv', 'venv', 'node_modules'] as const;

/** As many as runner-files.ts has staging mount points for (root stages each host path). */
export const MAX_DEPENDENCY_FOLDERS = 4;

/** Those of `.venv`, `venv` and `node_modules` at the repository root that are real folders (not links). */
export function findDependencyFolders(repoTopLevel: string): DependencyFolder[] {
  const root = path.resolve(repoTopLevel);
  return DEPENDENCY_FOLDER_NAMES.flatMap((relative) => {
    const hostPath = path.join(root, relative);
    return lstatOrNull(hostPath)?.isDirectory() ? [{ relative, hostPath }] : [];
  });
}

/**
 * Throws on a folder the sandbox must not mount: a relative path that leaves the workspace or could
 * be read as an option, a host path that is not an absolute path to a real folder, more folders
 * than there are staging mount points, or two folders of which one holds the other.
 */
export function checkDependencyFolders(dependencies: DependencyFolder[]): DependencyFolder[] {
  if (dependencies.length > MAX_DEPENDENCY_FOLDERS) {
    throw new Error(
      `runTestSuite: at most ${MAX_DEPENDENCY_FOLDERS} dependency folders can be mounted, got ${dependencies.length} (${dependencies.map((d) => d.relative).join(', ')})`,
    );
  }
  for (const { relative, hostPath } of dependencies) {
    const parts = typeof relative === 'string' ? relative.split('/') : [];
    if (
      typeof relative !== 'string' ||
      relative === '' ||
      relative.includes('\0') ||
      path.posix.isAbsolute(relative) ||
      relative.startsWith('-') ||
      parts.some((part) => part === '' || part === '.' || part === '..')
    ) {
      throw new Error(
        `runTestSuite: dependency folder ${JSON.stringify(relative)} must be a plain path relative to the repository, inside it`,
      );
    }
    if (typeof hostPath !== 'string' || !path.isAbsolute(hostPath) || !lstatOrNull(hostPath)?.isDirectory()) {
      throw new Error(
        `runTestSuite: dependency folder ${relative} is not at ${JSON.stringify(hostPath)} (an absolute path to a folder, not a link, is needed)`,
      );
    }
  }
  for (const a of dependencies) {
    for (const b of dependencies) {
      if (a !== b && (a.relative === b.relative || b.relative.startsWith(`${a.relative}/`))) {
        throw new Error(`runTestSuite: dependency folders ${a.relative} and ${b.relative} overlap`);
      }
    }
  }
  return dependencies;
}

/**
 * Makes each folder's mount point in the host workspace an empty folder of its own. Runs while
 * nothing of a run is alive and never follows a link: a link, file or anything else in the way
 * (a previous run may have put one there) is removed first, as for acceptance copies.
 */
export function prepareMountPoints(workspace: string, dependencies: DependencyFolder[]): void {
  for (const { relative } of dependencies) {
    let dir = workspace;
    for (const part of relative.split('/')) {
      dir = path.join(dir, part);
      const st = lstatOrNull(dir);
      if (st?.isDirectory()) continue;
      if (st) fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { mode: 0o755 });
    }
  }
}

/**
 * Of the workspace-relative `folders` (each inside a dependency folder), those that can be given a
 * private tmpfs in the sandbox: bwrap needs the folder to exist in the read-only mount, so it is
 * made in the host dependency folder when missing (an empty folder, as the tool would make itself).
 * One in the way as a link or a file is left alone and the folder goes without.
 */
export function prepareScratchFolders(dependencies: DependencyFolder[], folders: string[]): string[] {
  return folders.filter((folder) => {
    const dep = dependencies.find((d) => folder.startsWith(`${d.relative}/`));
    if (!dep) return false;
    const hostFolder = path.join(dep.hostPath, folder.slice(dep.relative.length + 1));
    try {
      fs.mkdirSync(hostFolder, { mode: 0o755 });
    } catch {
      // There already, or the folder is not ours to change: whatever is there decides below.
    }
    return lstatOrNull(hostFolder)?.isDirectory() ?? false;
  });
}

function lstatOrNull(file: string): fs.Stats | null {
  try {
    return fs.lstatSync(file);
  } catch {
    return null;
  }
}
