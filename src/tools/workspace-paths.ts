import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ModelBehaviorError } from '../shared/errors';

/**
 * Resolves a model-supplied relative path inside the workspace, or throws.
 * Refuses absolute paths, `..` segments and any existing component that is a
 * symbolic link, so that no path a model names can lead outside the workspace.
 */
export async function resolveInWorkspace(workspace: string, requested: string): Promise<string> {
  if (typeof requested !== 'string' || requested.trim() === '') {
    throw new ModelBehaviorError('path must be a non-empty relative path');
  }
  if (requested.includes('\0')) throw new ModelBehaviorError('path contains a NUL byte');
  const normalizedInput = requested.replace(/\\/g, '/');
  if (path.isAbsolute(normalizedInput) || /^[a-zA-Z]:/.test(normalizedInput)) {
    throw new ModelBehaviorError(`path must be relative to the workspace, got absolute path "${requested}"`);
  }
  const segments = normalizedInput.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => s === '..')) {
    throw new ModelBehaviorError(`path must stay inside the workspace, "${requested}" contains ".."`);
  }
  const root = await fs.realpath(workspace);
  let current = root;
  for (const segment of segments) {
    current = path.join(current, segment);
    let stat;
    try {
      stat = await fs.lstat(current);
    } catch {
      // The rest of the path does not exist yet: nothing below can be a link.
      break;
    }
    if (stat.isSymbolicLink()) {
      throw new ModelBehaviorError(`path "${requested}" goes through a symbolic link, which is not allowed`);
    }
  }
  return path.join(root, ...segments);
}

/** The workspace-relative form of a path, with forward slashes. */
export function toWorkspaceRelative(workspaceRoot: string, absolute: string): string {
  return path.relative(workspaceRoot, absolute).split(path.sep).join('/');
}
