import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { ModelBehaviorError } from '../shared/errors';
import { parseToolArguments, type FileToolName, type ToolArgs } from './tool-schemas';
import { resolveInWorkspace, toWorkspaceRelative } from './workspace-paths';

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

/** Files below `dir`, workspace-relative, sorted, skipping caches and links. */
export async function listWorkspaceFiles(
  root: string,
  dir: string,
  limit = MAX_LISTED_FILES,
): Promise<string[]> {
  const found: string[] = [];
  const walk = async (current: string): Promise<void> => {
    const entries = await fs.readdir(current, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (found.length >= limit) return;
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) await walk(full);
      } else if (entry.isFile()) {
        found.push(toWorkspaceRelative(root, full));
      }
    }
  };
  await walk(dir);
  return found;
}

async function listFiles(ctx: ToolContext, args: ToolArgs<'list_files'>): Promise<ToolResult> {
  const root = await fs.realpath(ctx.workspace);
  const dir = args.path && args.path !== '.' ? await resolveInWorkspace(root, args.path) : root;
  const stat = await fs.stat(dir);
  if (!stat.isDirectory()) throw new ModelBehaviorError(`"${args.path}" is not a folder`);
  const files = await listWorkspaceFiles(root, dir, MAX_LISTED_FILES + 1);
  const truncated = files.length > MAX_LISTED_FILES;
  return { ok: true, files: files.slice(0, MAX_LISTED_FILES), ...(truncated ? { truncated: true } : {}) };
}

async function readFile(ctx: ToolContext, args: ToolArgs<'read_file'>): Promise<ToolResult> {
  const target = await resolveInWorkspace(ctx.workspace, args.path);
  const stat = await fs.stat(target);
  if (!stat.isFile()) throw new ModelBehaviorError(`"${args.path}" is not a file`);
  const handle = await fs.open(target, 'r');
  try {
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_READ_BYTES));
    await handle.read(buffer, 0, buffer.length, 0);
    const content = buffer.toString('utf8');
    if (stat.size > MAX_READ_BYTES) {
      return {
        ok: true,
        path: args.path,
        content: `${content}\n[… ${stat.size - MAX_READ_BYTES} more bytes not shown]`,
        truncated: true,
      };
    }
    return { ok: true, path: args.path, content };
  } finally {
    await handle.close();
  }
}

async function createFile(ctx: ToolContext, args: ToolArgs<'create_file'>): Promise<ToolResult> {
  const target = await resolveInWorkspace(ctx.workspace, args.path);
  const relative = toWorkspaceRelative(await fs.realpath(ctx.workspace), target);
  if (isProtected(ctx, relative)) {
    throw new ModelBehaviorError(
      `"${relative}" is an acceptance test given by the user and cannot be changed`,
    );
  }
  const bytes = Buffer.byteLength(args.content, 'utf8');
  if (bytes > MAX_WRITE_BYTES)
    throw new ModelBehaviorError(`content is ${bytes} bytes; the limit is ${MAX_WRITE_BYTES}`);
  await fs.mkdir(path.dirname(target), { recursive: true });
  // Write through a temporary file so a crash never leaves half a file behind.
  const temporary = `${target}.aca-tmp-${process.pid}`;
  await fs.writeFile(temporary, args.content, 'utf8');
  await fs.rename(temporary, target);
  return { ok: true, path: relative, bytes };
}

async function deleteFile(ctx: ToolContext, args: ToolArgs<'delete_file'>): Promise<ToolResult> {
  const target = await resolveInWorkspace(ctx.workspace, args.path);
  const relative = toWorkspaceRelative(await fs.realpath(ctx.workspace), target);
  if (isProtected(ctx, relative)) {
    throw new ModelBehaviorError(
      `"${relative}" is an acceptance test given by the user and cannot be deleted`,
    );
  }
  const stat = await fs.lstat(target);
  if (!stat.isFile()) throw new ModelBehaviorError(`"${args.path}" is not a file`);
  await fs.unlink(target);
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
