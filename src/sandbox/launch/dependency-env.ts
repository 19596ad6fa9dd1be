import * as path from 'node:path';
import type { DependencyFolder } from '../../shared/test-command';

/** A dependency folder as the test process sees it. */
export interface SeenDependency {
  /** Its path relative to the repository root, e.g. `.venv` or `node_modules`. */
  relative: string;
  /** Where the test process finds it. */
  path: string;
  /**
   * Whether it is mounted at its place in the workspace (the sandbox), so that Python and Node find
   * it as they would in the repository; without a sandbox it stays in the user's repository.
   */
  inWorkspace: boolean;
}

/** The folders as the sandbox shows them: mounted at their place in its workspace. */
export function mountedDependencies(dependencies: DependencyFolder[], workspace: string): SeenDependency[] {
  return dependencies.map((dep) => ({
    relative: dep.relative,
    path: path.posix.join(workspace, dep.relative),
    inWorkspace: true,
  }));
}

/** The folders as a run without a sandbox finds them: in the user's repository. */
export function hostDependencies(dependencies: DependencyFolder[]): SeenDependency[] {
  return dependencies.map((dep) => ({ relative: dep.relative, path: dep.hostPath, inWorkspace: false }));
}

/** The folder of a dependency folder's commands, or null for a kind of folder that has none. */
export function dependencyBinDir(relative: string): string | null {
  const name = path.posix.basename(relative);
  if (name === '.venv' || name === 'venv') return 'bin';
  if (name === 'node_modules') return '.bin';
  return null;
}

export function isVirtualEnv(relative: string): boolean {
  return dependencyBinDir(relative) === 'bin';
}

/** PATH with the dependency folders' commands first, in the order the folders were given. */
export function dependencySearchPath(dependencies: SeenDependency[], rest: string[]): string {
  const bins = dependencies.flatMap((dep) => {
    const bin = dependencyBinDir(dep.relative);
    return bin ? [path.posix.join(dep.path, bin)] : [];
  });
  return [...new Set([...bins, ...rest])].join(':');
}

/**
 * What a virtual environment's `activate` would set, and, without a sandbox, NODE_PATH: a
 * node_modules left in the user's repository is not found by walking up from the workspace, and
 * NODE_PATH is what CommonJS `require` and Jest's resolver consult then (ES module imports do not).
 */
export function dependencyEnv(dependencies: SeenDependency[]): Record<string, string> {
  const env: Record<string, string> = {};
  const venv = dependencies.find((dep) => isVirtualEnv(dep.relative));
  if (venv) env.VIRTUAL_ENV = venv.path;
  const elsewhere = dependencies.filter(
    (dep) => !dep.inWorkspace && path.posix.basename(dep.relative) === 'node_modules',
  );
  if (elsewhere.length > 0) env.NODE_PATH = elsewhere.map((dep) => dep.path).join(':');
  return env;
}
