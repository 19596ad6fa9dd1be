import * as path from 'node:path';
import { z } from 'zod';
import { ModelBehaviorError } from '../shared/errors';
import { defineWorkspaceTool, type ToolContext, type ToolResult } from './tool';
import { searchFilesTool } from './search-files';
import { pathSegments, withWorkspace } from './workspace-fs';

export type { ToolContext, ToolResult } from './tool';

/** What one read_file answer holds at most; read a larger file in windows. */
export const MAX_READ_BYTES = 100_000;
/** Characters of one line read_file shows in a window of several lines; the rest is named. */
export const MAX_LINE_CHARS = 2_000;
/** Files larger than this are not read. */
export const MAX_FILE_BYTES = 16_000_000;
/** The largest file a tool writes. */
export const MAX_WRITE_BYTES = 1_000_000;
/** Files larger than this are not edited: an edit could not write them back anyway. */
export const MAX_EDIT_BYTES = MAX_WRITE_BYTES;
export const MAX_LISTED_FILES = 500;
/** Folders list_files never enters (dependencies, caches, git); the repository map skips them too. */
export const SKIPPED_FOLDERS: ReadonlySet<string> = new Set([
  '.git',
  'node_modules',
  '__pycache__',
  '.pytest_cache',
  '.aca',
]);

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
  description:
    'List the files under a folder of the workspace, recursively, leaving out what .gitignore ignores.',
  parameters: z.strictObject({
    path: z
      .string()
      .optional()
      .describe('Folder to list, relative to the workspace root; the root when omitted.'),
    depth: z
      .number()
      .int()
      .min(1)
      .max(64)
      .optional()
      .describe('How many folder levels to go down; 1 lists only the folder itself. All when omitted.'),
  }),
  target: (args) => args.path ?? '.',
  async execute(ctx, args) {
    const folder = args.path && args.path !== '.' ? args.path : '.';
    const files = await withWorkspace(ctx.workspace, (ws) =>
      ws.listFiles(folder, MAX_LISTED_FILES + 1, SKIPPED_FOLDERS, {
        ...(args.depth !== undefined ? { depth: args.depth } : {}),
        gitignore: true,
      }),
    );
    const truncated = files.length > MAX_LISTED_FILES;
    return { ok: true, files: files.slice(0, MAX_LISTED_FILES), ...(truncated ? { truncated: true } : {}) };
  },
});

export const readFileTool = defineWorkspaceTool({
  name: 'read_file',
  description:
    'Read a text file of the workspace, whole or a window of lines. The answer says which lines it holds, how many the file has, and whether it was cut. Very long lines are cut too (the answer names them); start_column reads one on from a later character.',
  parameters: z.strictObject({
    path: relativePath,
    start_line: z.number().int().min(1).optional().describe('First line to read (1-based); 1 when omitted.'),
    end_line: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('Last line to read (inclusive); the end when omitted.'),
    start_column: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'With start_line and end_line the same line: its first character to show (1-based), to read a long line piece by piece.',
      ),
  }),
  target: (args) =>
    args.start_line || args.end_line
      ? `${args.path}:${args.start_line ?? 1}-${args.end_line ?? ''}`
      : args.path,
  async execute(ctx, args) {
    const { content, size } = await withWorkspace(ctx.workspace, (ws) =>
      ws.readFile(args.path, MAX_FILE_BYTES),
    );
    if (size > MAX_FILE_BYTES) {
      throw new ModelBehaviorError(
        `"${args.path}" is ${size} bytes; files over ${MAX_FILE_BYTES} bytes are not read`,
      );
    }
    return readWindow(
      pathSegments(args.path).join('/'),
      content.toString('utf8'),
      args.start_line,
      args.end_line,
      args.start_column,
    );
  },
});

/**
 * The lines of a window, cut at a line boundary when they would exceed MAX_READ_BYTES. A line
 * longer than MAX_LINE_CHARS is shown only in part, with a note in the line saying how to read
 * on; a window of one line may start at `startColumn` and shows up to a whole answer's worth.
 */
export function readWindow(
  path: string,
  text: string,
  startLine = 1,
  endLine?: number,
  startColumn?: number,
): ToolResult {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const totalLines = lines.length;
  if (endLine !== undefined && endLine < startLine) {
    throw new ModelBehaviorError(`end_line ${endLine} is before start_line ${startLine}`);
  }
  if (startLine > Math.max(totalLines, 1)) {
    throw new ModelBehaviorError(
      `start_line ${startLine} is past the end: "${path}" has ${totalLines} lines`,
    );
  }
  if (startColumn !== undefined && endLine !== startLine) {
    throw new ModelBehaviorError('start_column needs start_line and end_line to name the same line');
  }
  const last = Math.min(endLine ?? totalLines, totalLines);
  const taken: string[] = [];
  const clipped: number[] = [];
  let bytes = 0;
  let truncated = false;
  for (let n = startLine; n <= last; n++) {
    const whole = lines[n - 1] ?? '';
    let line = whole;
    if (startColumn !== undefined) {
      if (startColumn > Math.max(whole.length, 1)) {
        throw new ModelBehaviorError(
          `start_column ${startColumn} is past the end: line ${n} has ${whole.length} characters`,
        );
      }
      line = clipLine(whole, n, startColumn, MAX_READ_BYTES / 4);
    } else if (whole.length > MAX_LINE_CHARS) {
      line = clipLine(whole, n, 1, MAX_LINE_CHARS);
    }
    if (line !== whole) clipped.push(n);
    const cost = Buffer.byteLength(line, 'utf8') + 1;
    if (bytes + cost > MAX_READ_BYTES && taken.length > 0) {
      if (line !== whole) clipped.pop();
      truncated = true;
      break;
    }
    taken.push(line);
    bytes += cost;
  }
  const shownEnd = startLine + taken.length - 1;
  return {
    ok: true,
    path,
    content: taken.join('\n') + (taken.length ? '\n' : ''),
    start_line: startLine,
    end_line: Math.max(shownEnd, startLine - 1),
    total_lines: totalLines,
    truncated: truncated || shownEnd < (endLine === undefined ? totalLines : last) ? true : false,
    // The note at each such line's end says how to read on.
    ...(clipped.length ? { clipped_lines: clipped } : {}),
  };
}

/**
 * `length` characters of a line from `column` (1-based), never splitting a surrogate pair, with a
 * note saying what was left out and how to read on when anything was.
 */
function clipLine(line: string, n: number, column: number, length: number): string {
  let from = column - 1;
  if (isLowSurrogate(line.charCodeAt(from))) from -= 1;
  let to = Math.min(line.length, from + length);
  if (to < line.length && isLowSurrogate(line.charCodeAt(to))) to -= 1;
  if (from === 0 && to === line.length) return line;
  const shown = line.slice(from, to);
  const more = to < line.length ? ` read on with start_line ${n}, end_line ${n}, start_column ${to + 1}` : '';
  return `${shown} [… line ${n} has ${line.length} characters; these are ${from + 1}-${to}.${more}]`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

export const createFileTool = defineWorkspaceTool({
  name: 'create_file',
  description: 'Create a file in the workspace, or overwrite it, with the given content.',
  parameters: z.strictObject({
    path: relativePath,
    content: z.string().describe('The whole content of the file; an existing file is overwritten.'),
    executable: z
      .boolean()
      .optional()
      .describe(
        'true: the file is executable (mode 755); false: it is not (644). Leave it out to keep an existing file’s mode (new files: 644).',
      ),
  }),
  target: (args) => args.path,
  async execute(ctx, args) {
    const relative = checkWritable(ctx, args.path, 'changed');
    if (ctx.partlyRead?.has(relative)) {
      throw new ModelBehaviorError(
        `"${relative}" was read only in part; rewriting it whole would lose the rest. Change it with edit_file, or read it whole first`,
      );
    }
    const bytes = Buffer.byteLength(args.content, 'utf8');
    if (bytes > MAX_WRITE_BYTES)
      throw new ModelBehaviorError(`content is ${bytes} bytes; the limit is ${MAX_WRITE_BYTES}`);
    const mode = args.executable === undefined ? undefined : args.executable ? 0o755 : 0o644;
    await withWorkspace(ctx.workspace, (ws) => ws.writeFile(relative, args.content, mode));
    return { ok: true, path: relative, bytes };
  },
});

export const editFileTool = defineWorkspaceTool({
  name: 'edit_file',
  description:
    'Replace exact text in a file: old_string must occur exactly once (or set replace_all). Use it instead of rewriting a large file.',
  parameters: z.strictObject({
    path: relativePath,
    old_string: z.string().min(1).describe('The exact text to replace, with enough context to be unique.'),
    new_string: z.string().describe('The text to put in its place.'),
    replace_all: z.boolean().optional().describe('Replace every occurrence instead of exactly one.'),
  }),
  target: (args) => args.path,
  async execute(ctx, args) {
    const relative = checkWritable(ctx, args.path, 'changed');
    return withWorkspace(ctx.workspace, async (ws) => {
      // Nothing larger than a write may be is read: the edit's time and memory stay bounded.
      const { content, size } = await ws.readFile(relative, MAX_EDIT_BYTES);
      if (size > MAX_EDIT_BYTES) {
        throw new ModelBehaviorError(
          `"${relative}" is ${size} bytes; files over ${MAX_EDIT_BYTES} bytes are not edited (delete it, or write a smaller one with create_file)`,
        );
      }
      const text = content.toString('utf8');
      const found = occurrences(text, args.old_string);
      if (found.count === 0) throw new ModelBehaviorError(`old_string does not occur in "${relative}"`);
      if (found.count > 1 && !args.replace_all) {
        const shown = found.lines.join(', ');
        throw new ModelBehaviorError(
          `old_string occurs ${found.count} times in "${relative}" (lines ${shown}${found.count > found.lines.length ? ', …' : ''}); add context to make it unique, or set replace_all`,
        );
      }
      const replaced = args.replace_all ? found.count : 1;
      // Sized before it is built, so a growing replace_all is refused without being made.
      const bytes =
        Buffer.byteLength(text, 'utf8') +
        replaced * (Buffer.byteLength(args.new_string, 'utf8') - Buffer.byteLength(args.old_string, 'utf8'));
      if (bytes > MAX_WRITE_BYTES)
        throw new ModelBehaviorError(
          `the edited file would be ${bytes} bytes; the limit is ${MAX_WRITE_BYTES}`,
        );
      const updated = args.replace_all
        ? text.split(args.old_string).join(args.new_string)
        : text.replace(args.old_string, () => args.new_string);
      await ws.writeFile(relative, updated);
      return { ok: true, path: relative, replacements: replaced, bytes };
    });
  },
});

/** How often `needle` occurs (non-overlapping), and the 1-based lines of the first 20 occurrences. */
function occurrences(text: string, needle: string): { count: number; lines: number[] } {
  const lines: number[] = [];
  let count = 0;
  let line = 1;
  let scanned = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    count += 1;
    if (lines.length < 20) {
      for (let i = scanned; i < at; i++) if (text.charCodeAt(i) === 10) line++;
      scanned = at;
      lines.push(line);
    }
  }
  return { count, lines };
}

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
  search_files: searchFilesTool,
  create_file: createFileTool,
  edit_file: editFileTool,
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
