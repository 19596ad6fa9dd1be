import * as path from 'node:path';
import { ModelBehaviorError } from '../shared/errors';
import { parseToolArguments, type FileToolName, type ToolArgs } from './tool-schemas';
import { pathSegments, withWorkspace } from './workspace-fs';

export interface ToolContext {
  workspace: string;
  /** Workspace-relative paths no agent may write or delete (the user's acceptance tests). */
  protectedPaths: readonly string[];
}

export type ToolResult = ({ ok: true } & Record<string, unknown>) | { ok: false; error: string };

export const MAX_READ_BYTES = 100_000;
export const MAX_WRITE_BYTES = 1_000_000;
export const MAX_LISTED_FILES = 500;
const SKIPPED_FOLDERS = new Set(['.git', 'node_modules', '__pycache__', '.pytest_cache', '.aca']);

function isProtected(ctx: ToolContext, relative: string): boolean {
  return ctx.protectedPaths.some((p) => p === relative || relative.startsWith(`${p}/`));
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

async function listFiles(ctx: ToolContext, args: ToolArgs<'list_files'>): Promise<ToolResult> {
  const folder = args.path && args.path !== '.' ? args.path : '.';
  const files = await withWorkspace(ctx.workspace, (ws) =>
    ws.listFiles(folder, MAX_LISTED_FILES + 1, SKIPPED_FOLDERS),
  );
  const truncated = files.length > MAX_LISTED_FILES;
  return { ok: true, files: files.slice(0, MAX_LISTED_FILES), ...(truncated ? { truncated: true } : {}) };
}

async function readFile(ctx: ToolContext, args: ToolArgs<'read_file'>): Promise<ToolResult> {
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

async function createFile(ctx: ToolContext, args: ToolArgs<'create_file'>): Promise<ToolResult> {
  const relative = checkWritable(ctx, args.path, 'changed');
  const bytes = Buffer.byteLength(args.content, 'utf8');
  if (bytes > MAX_WRITE_BYTES)
    throw new ModelBehaviorError(`content is ${bytes} bytes; the limit is ${MAX_WRITE_BYTES}`);
  await withWorkspace(ctx.workspace, (ws) => ws.writeFile(relative, args.content));
  return { ok: true, path: relative, bytes };
}

async function deleteFile(ctx: ToolContext, args: ToolArgs<'delete_file'>): Promise<ToolResult> {
  const relative = checkWritable(ctx, args.path, 'deleted');
  await withWorkspace(ctx.workspace, (ws) => ws.deleteFile(relative));
  return { ok: true, path: relative, deleted: true };
}

const IMPLEMENTATIONS: { [N in FileToolName]: (ctx: ToolContext, args: ToolArgs<N>) => Promise<ToolResult> } =
  {
    list_files: listFiles,
    read_file: readFile,
    create_file: createFile,
    delete_file: deleteFile,
  };

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
  const parsed = parseToolArguments(name, rawArguments);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  try {
    const run = IMPLEMENTATIONS[name] as (ctx: ToolContext, args: unknown) => Promise<ToolResult>;
    return await run(ctx, parsed.args);
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
