import * as path from 'node:path';
import { z } from 'zod';
import { ModelBehaviorError } from '../shared/errors';
import { defineWorkspaceTool, type ToolContext, type ToolResult } from './tool';
import { pathSegments, withWorkspace } from './workspace-fs';

export type { ToolContext, ToolResult } from './tool';

export const MAX_READ_BYTES = 100_000;
export const MAX_WRITE_BYTES = 1_000_000;
export const MAX_LISTED_FILES = 500;
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules', '__pycache__', '.pytest_cache', '.aca']);

const relativePath = z.string().min(1).describe('A path relative to the workspace root, e.g. "src/app.py".');

function isProtected(ctx: ToolContext, relative: string): boolean {
  return ctx.protectedPaths.some((p) => p === relative || relative.startsWith(`${p}/`));
}

function checkWritable(ctx: ToolContext, requested: string, verb: string): string {
  const relative = pathSegments(requested).join('/');
  if (isProtected(ctx, relative)) {
    throw new ModelBehaviorError(
      `"${relative}" is an acceptance test given by the user and cannot be ${verb}`,
    );
  }
  return relative;
}

/** Files below `dir` (a folder inside `root`), root-relative, sorted, skipping caches and links. */
export async function listWorkspaceFiles(
  root: string,
  dir: string,
  limit = MAX_LISTED_FILES,
): Promise<string[]> {
  const relative = path.relative(root, dir).split(path.sep).join('/');
  return withWorkspace(root, (ws) => ws.listFiles(relative || '.', limit, SKIPPED_FOLDERS));
}

export const listFilesTool = defineWorkspaceTool({
  name: 'list_files',
  description: 'List the files under a folder of the workspace, recursively.',
  parameters: z.strictObject({
    path: z
      .string()
      .optional()
      .describe('Folder to list, relative to the workspace root; the root when omitted.'),
  }),
  target: (args) => args.path ?? '.',
  async execute(ctx, args) {
    const folder = args.path && args.path !== '.' ? args.path : '.';
    const files = await withWorkspace(ctx.workspace, (ws) =>
      ws.listFiles(folder, MAX_LISTED_FILES + 1, SKIPPED_FOLDERS),
    );
    const truncated = files.length > MAX_LISTED_FILES;
    return { ok: true, files: files.slice(0, MAX_LISTED_FILES), ...(truncated ? { truncated: true } : {}) };
  },
});

export const readFileTool = defineWorkspaceTool({
  name: 'read_file',
  description: 'Read a text file of the workspace.',
  parameters: z.strictObject({ path: relativePath }),
  target: (args) => args.path,
  async execute(ctx, args) {
    const { content, size } = await withWorkspace(ctx.workspace, (ws) =>
      ws.readFile(args.path, MAX_READ_BYTES),
    );
    const text = content.toString('utf8');
    if (size > MAX_READ_BYTES) {
      return {
        ok: true,
        path: args.path,
        content: `${text}\n[… ${size - MAX_READ_BYTES} more bytes not shown]`,
        truncated: true,
      };
    }
    return { ok: true, path: args.path, content: text };
  },
});

export const createFileTool = defineWorkspaceTool({
  name: 'create_file',
  description: 'Create a file in the workspace, or overwrite it, with the given content.',
  parameters: z.strictObject({
    path: relativePath,
    content: z.string().describe('The whole content of the file; an existing file is overwritten.'),
  }),
  target: (args) => args.path,
  async execute(ctx, args) {
    const relative = checkWritable(ctx, args.path, 'changed');
    const bytes = Buffer.byteLength(args.content, 'utf8');
    if (bytes > MAX_WRITE_BYTES)
      throw new ModelBehaviorError(`content is ${bytes} bytes; the limit is ${MAX_WRITE_BYTES}`);
    await withWorkspace(ctx.workspace, (ws) => ws.writeFile(relative, args.content));
    return { ok: true, path: relative, bytes };
  },
});

export const deleteFileTool = defineWorkspaceTool({
  name: 'delete_file',
  description: 'Delete a file of the workspace.',
  parameters: z.strictObject({ path: relativePath }),
  target: (args) => args.path,
  async execute(ctx, args) {
    const relative = checkWritable(ctx, args.path, 'deleted');
    await withWorkspace(ctx.workspace, (ws) => ws.deleteFile(relative));
    return { ok: true, path: relative, deleted: true };
  },
});

/** Every tool that acts on the workspace, by name. */
export const FILE_TOOLS = {
  list_files: listFilesTool,
  read_file: readFileTool,
  create_file: createFileTool,
  delete_file: deleteFileTool,
} as const;

export type FileToolName = keyof typeof FILE_TOOLS;

export function isFileToolName(name: string): name is FileToolName {
  return Object.prototype.hasOwnProperty.call(FILE_TOOLS, name);
}

const MODEL_FACING_FS_ERRORS = new Set([
  'ENOENT',
  'EISDIR',
  'ENOTDIR',
  'EEXIST',
  'ENAMETOOLONG',
  'EACCES',
  'EPERM',
  'ELOOP',
]);

/**
 * Runs one file tool on raw model arguments. Anything the model got wrong comes
 * back as `{ ok: false, error }`; only failures of the machine itself throw.
 */
export async function executeFileTool(
  ctx: ToolContext,
  name: FileToolName,
  rawArguments: string,
): Promise<ToolResult> {
  try {
    return await FILE_TOOLS[name].invoke(ctx, rawArguments);
  } catch (err) {
    if (err instanceof ModelBehaviorError) return { ok: false, error: err.message };
    const code = (err as NodeJS.ErrnoException).code;
    if (code && MODEL_FACING_FS_ERRORS.has(code)) {
      const what = code === 'ENOENT' ? 'no such file or folder' : code;
      return { ok: false, error: `${name} failed: ${what}` };
    }
    throw err;
  }
}
