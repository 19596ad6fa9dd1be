/**
 * File operations inside a workspace that code under test has had its hands on.
 *
 * Why this is race-free: no path is ever resolved from the workspace root by name. The root is
 * opened once; every further step opens ONE name relative to an already-open folder, through
 * `/proc/self/fd/<folder fd>/<name>` with O_NOFOLLOW (Linux resolves the fd link to the open
 * folder itself, wherever it has been moved, and then looks up only `<name>` in it). A symbolic
 * link at any step fails with ELOOP instead of being followed, and a folder swapped for a link
 * after it was checked changes nothing, because what was checked is the open fd, not a name.
 * Files are written to a temporary name in the same open folder, created with O_CREAT|O_EXCL|
 * O_NOFOLLOW and a random suffix (nothing can be pre-planted there that the write would follow),
 * then renamed over the target; rename replaces a link at the target instead of following it.
 * Deletion unlinks one name in an open folder, which never follows a link either.
 *
 * What it assumes: Linux with /proc mounted, which the sandbox needs anyway.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import ignore, { type Ignore } from 'ignore';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { ModelBehaviorError } from '../shared/errors';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = constants;

/** Checks a model-supplied workspace-relative path and splits it into names. */
export function pathSegments(requested: unknown): string[] {
  if (typeof requested !== 'string' || requested.trim() === '') {
    throw new ModelBehaviorError('path must be a non-empty relative path');
  }
  if (requested.includes('\0')) throw new ModelBehaviorError('path contains a NUL byte');
  const normalized = requested.replace(/\\/g, '/');
  if (normalized.startsWith('/') || /^[a-zA-Z]:/.test(normalized)) {
    throw new ModelBehaviorError(`path must be relative to the workspace, got absolute path "${requested}"`);
  }
  const segments = normalized.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.some((s) => s === '..')) {
    throw new ModelBehaviorError(`path must stay inside the workspace, "${requested}" contains ".."`);
  }
  return segments;
}

const at = (folder: fs.FileHandle, name: string) => `/proc/self/fd/${folder.fd}/${name}`;

function linkRefused(requested: string): ModelBehaviorError {
  return new ModelBehaviorError(`path "${requested}" goes through a symbolic link, which is not allowed`);
}

/** Opens one folder below `folder`, never through a link. */
async function openFolderAt(folder: fs.FileHandle, name: string, requested: string): Promise<fs.FileHandle> {
  try {
    return await fs.open(at(folder, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw linkRefused(requested);
    if (code === 'ENOTDIR') {
      // With O_DIRECTORY a link is refused as ENOTDIR; look again only to word the error.
      const isLink = await fs
        .lstat(at(folder, name))
        .then((st) => st.isSymbolicLink())
        .catch(() => false);
      if (isLink) throw linkRefused(requested);
      throw new ModelBehaviorError(`"${name}" in "${requested}" is not a folder`);
    }
    throw err;
  }
}

/** An open workspace: the root folder's fd, from which every operation starts. */
export class WorkspaceFs {
  private constructor(private readonly root: fs.FileHandle) {}

  static async open(workspace: string): Promise<WorkspaceFs> {
    return new WorkspaceFs(await fs.open(workspace, O_RDONLY | O_DIRECTORY));
  }

  async close(): Promise<void> {
    await this.root.close();
  }

  /**
   * Opens the folder that holds the last segment (creating folders on the way when asked) and
   * hands it to `use`; every fd opened on the way is closed afterwards.
   */
  private async inParent<T>(
    requested: string,
    segments: string[],
    create: boolean,
    use: (parent: fs.FileHandle, name: string) => Promise<T>,
  ): Promise<T> {
    const opened: fs.FileHandle[] = [];
    try {
      let folder = this.root;
      for (const name of segments.slice(0, -1)) {
        if (create) {
          await fs.mkdir(at(folder, name)).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'EEXIST') throw err;
          });
        }
        folder = await openFolderAt(folder, name, requested);
        opened.push(folder);
      }
      return await use(folder, segments[segments.length - 1]);
    } finally {
      for (const handle of opened) await handle.close();
    }
  }

  /** Opens a folder (the root for an empty path) for listing. */
  async openFolder(requested: string): Promise<fs.FileHandle> {
    const segments = requested === '.' || requested === '' ? [] : pathSegments(requested);
    if (segments.length === 0) return fs.open(at(this.root, '.'), O_RDONLY | O_DIRECTORY);
    return this.inParent(requested, segments, false, (parent, name) => openFolderAt(parent, name, requested));
  }

  /** Reads at most `limit` bytes of a regular file; `size` is the whole file's. */
  async readFile(requested: string, limit: number): Promise<{ content: Buffer; size: number }> {
    const segments = pathSegments(requested);
    return this.inParent(requested, segments, false, async (parent, name) => {
      let file: fs.FileHandle;
      try {
        // O_NONBLOCK: a FIFO planted under the name must not hang the worker.
        file = await fs.open(at(parent, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw linkRefused(requested);
        throw err;
      }
      try {
        const stat = await file.stat();
        if (!stat.isFile()) throw new ModelBehaviorError(`"${requested}" is not a file`);
        const content = Buffer.alloc(Math.min(stat.size, limit));
        const { bytesRead } = await file.read(content, 0, content.length, 0);
        return { content: content.subarray(0, bytesRead), size: stat.size };
      } finally {
        await file.close();
      }
    });
  }

  /**
   * Reads several regular files of one folder, opening the folder once (the repository map reads
   * thousands of small files; walking down to each from the root again would triple the opens).
   * The files are read with blocking calls: for thousands of small files the thread pool's round
   * trips cost several times the reads themselves, and one folder's worth blocks for milliseconds.
   * Files larger than `limit` bytes are not read: their entry has `content` null and the size.
   * A name that is missing, a link or not a regular file yields null.
   */
  async readFilesIn(
    folder: string,
    names: readonly string[],
    limit: number,
  ): Promise<Array<{ content: Buffer | null; size: number } | null>> {
    const handle = await this.openFolder(folder);
    try {
      return names.map((name) => readRegularAtSync(handle, name, limit));
    } finally {
      await handle.close();
    }
  }

  /**
   * Replaces (or creates) a file with `content`, creating the folders on the way. Without a
   * `mode`, a file replaced keeps its permission bits (an executable script stays executable;
   * set-id bits are never carried over) and a new one is 0644.
   */
  async writeFile(requested: string, content: string | Buffer, mode?: number): Promise<void> {
    const segments = pathSegments(requested);
    await this.inParent(requested, segments, true, async (parent, name) => {
      if (mode === undefined) {
        const existing = await fs.lstat(at(parent, name)).catch(() => null);
        mode = existing?.isFile() ? existing.mode & 0o777 : 0o644;
      }
      const temporary = `.aca-write-${randomBytes(12).toString('hex')}`;
      const file = await fs.open(at(parent, temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
      try {
        await file.writeFile(content);
        await file.chmod(mode);
      } catch (err) {
        await file.close();
        await fs.unlink(at(parent, temporary)).catch(() => undefined);
        throw err;
      }
      await file.close();
      try {
        await fs.rename(at(parent, temporary), at(parent, name));
      } catch (err) {
        await fs.unlink(at(parent, temporary)).catch(() => undefined);
        throw err;
      }
    });
  }

  /** Deletes a regular file (a link or folder under the name is refused, not followed). */
  async deleteFile(requested: string): Promise<void> {
    const segments = pathSegments(requested);
    await this.inParent(requested, segments, false, async (parent, name) => {
      const stat = await fs.lstat(at(parent, name));
      if (!stat.isFile()) throw new ModelBehaviorError(`"${requested}" is not a file`);
      // Between the lstat and the unlink the name may be swapped; unlink removes whatever entry
      // is there (a link itself, never its target), and a folder makes it fail with EISDIR.
      await fs.unlink(at(parent, name));
    });
  }

  /**
   * Regular files below a folder, workspace-relative, sorted, at most `limit`; links, devices
   * and the folders in `skipped` are not entered. `depth` 1 lists the folder's own files only;
   * with `gitignore`, what the `.gitignore` files on the way ignore is left out, as git would.
   */
  async listFiles(
    requested: string,
    limit: number,
    skipped: ReadonlySet<string>,
    options: { depth?: number; gitignore?: boolean } = {},
  ): Promise<string[]> {
    const found: string[] = [];
    const maxDepth = options.depth ?? Infinity;
    const prefix = requested === '.' || requested === '' ? [] : pathSegments(requested);
    const rules: Array<{ base: string[]; rules: Ignore }> = [];
    if (options.gitignore) {
      // The rules of the folders above the one listed apply too.
      for (let i = 0; i < prefix.length; i++) {
        const above = prefix.slice(0, i);
        const text = await this.readIgnoreFile(above);
        if (text !== null) rules.push({ base: above, rules: ignore().add(text) });
      }
    }
    const ignored = (relative: string[], isFolder: boolean): boolean =>
      rules.some(({ base, rules: r }) => {
        const inner = relative.slice(base.length).join('/');
        return inner !== '' && r.ignores(isFolder ? `${inner}/` : inner);
      });
    const start = await this.openFolder(requested);
    const walk = async (folder: fs.FileHandle, relative: string[], depth: number): Promise<void> => {
      let own: { base: string[]; rules: Ignore } | null = null;
      if (options.gitignore) {
        const text = await readAt(folder, '.gitignore');
        if (text !== null) rules.push((own = { base: relative, rules: ignore().add(text) }));
      }
      try {
        const entries = await fs.readdir(at(folder, '.'), { withFileTypes: true });
        entries.sort((a, b) => a.name.localeCompare(b.name));
        for (const entry of entries) {
          if (found.length >= limit) return;
          const child = [...relative, entry.name];
          if (entry.isFile()) {
            if (!ignored(child, false)) found.push(child.join('/'));
          } else if (
            entry.isDirectory() &&
            !skipped.has(entry.name) &&
            depth < maxDepth &&
            !ignored(child, true)
          ) {
            let handle: fs.FileHandle;
            try {
              handle = await fs.open(at(folder, entry.name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            } catch {
              continue; // swapped for a link or removed since readdir: not ours to enter
            }
            try {
              await walk(handle, child, depth + 1);
            } finally {
              await handle.close();
            }
          }
        }
      } finally {
        if (own) rules.splice(rules.indexOf(own), 1);
      }
    };
    try {
      await walk(start, prefix, 1);
    } finally {
      await start.close();
    }
    return found;
  }

  /** The `.gitignore` of a folder of the workspace, or null. */
  private async readIgnoreFile(folder: string[]): Promise<string | null> {
    const handle = await this.openFolder(folder.length ? folder.join('/') : '.');
    try {
      return await readAt(handle, '.gitignore');
    } finally {
      await handle.close();
    }
  }
}

const MAX_IGNORE_FILE_BYTES = 1_000_000;

/** A small regular file in an open folder, never through a link; null when there is none. */
async function readAt(folder: fs.FileHandle, name: string): Promise<string | null> {
  let file: fs.FileHandle;
  try {
    file = await fs.open(at(folder, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = await file.stat();
    if (!stat.isFile()) return null;
    const content = Buffer.alloc(Math.min(stat.size, MAX_IGNORE_FILE_BYTES));
    const { bytesRead } = await file.read(content, 0, content.length, 0);
    return content.subarray(0, bytesRead).toString('utf8');
  } finally {
    await file.close();
  }
}

function readRegularAtSync(
  folder: fs.FileHandle,
  name: string,
  limit: number,
): { content: Buffer | null; size: number } | null {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) return null;
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted under the name must not hang the worker.
    fd = openSync(at(folder, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return null;
    if (stat.size > limit) return { content: null, size: stat.size };
    const content = Buffer.alloc(stat.size);
    const bytesRead = stat.size > 0 ? readSync(fd, content, 0, content.length, 0) : 0;
    return { content: content.subarray(0, bytesRead), size: stat.size };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Opens the workspace, runs `work` on it, and closes it again. */
export async function withWorkspace<T>(workspace: string, work: (ws: WorkspaceFs) => Promise<T>): Promise<T> {
  const ws = await WorkspaceFs.open(workspace);
  try {
    return await work(ws);
  } finally {
    await ws.close();
  }
}
