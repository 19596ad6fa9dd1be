import { SKIPPED_FOLDERS } from '../tools/file-tools';
import type { WorkspaceFs } from '../tools/workspace-fs';
import { extractDefinitions, isBinary, languageOf } from './definitions';
import type { MappedFile } from './rank';
import { splitWords } from './terms';

/**
 * Bounds on what one map may cost. The workspace is written by code under test, so each of these
 * stops something it could plant: a million files, a gigabyte file, a tree ten thousand folders
 * deep (each level holds an open folder while it is walked).
 */
export interface ScanLimits {
  /** Files listed at most; the map says when the listing stopped there. */
  maxFiles: number;
  /** Folder levels walked down from the root. */
  maxDepth: number;
  /** Source files read for definitions at most. */
  maxReadFiles: number;
  /** Bytes read for definitions in all (checked between batches, so it may be passed by one batch). */
  maxReadBytes: number;
  /** Larger files are listed but not read. */
  maxFileBytes: number;
}

export const DEFAULT_SCAN_LIMITS: ScanLimits = {
  maxFiles: 50_000,
  maxDepth: 32,
  maxReadFiles: 20_000,
  maxReadBytes: 32 * 1024 * 1024,
  maxFileBytes: 256 * 1024,
};

/** Besides what list_files skips: virtual environments, thousands of files nobody asked about. */
const MAP_SKIPPED_FOLDERS: ReadonlySet<string> = new Set([...SKIPPED_FOLDERS, '.venv', 'venv']);

/** Files read per batch; the byte budget is checked between batches, in a fixed order. */
const READ_BATCH = 256;
/** Folders opened at once; their files are then read one by one. */
const READ_CONCURRENCY = 8;

export interface Scan {
  files: MappedFile[];
  /** The listing stopped at `maxFiles`. */
  truncated: boolean;
}

/**
 * The workspace's files as list_files shows them (regular files only, never through a link,
 * `.gitignore` honoured), with the top-level definitions of the source files among them. Which
 * files are read within the limits is decided by the query's words in their paths, then by
 * depth and path, never by timing: the same workspace and query give the same scan.
 */
export async function scanWorkspace(ws: WorkspaceFs, queryText: string, limits: ScanLimits): Promise<Scan> {
  const listed = await ws.listFiles('.', limits.maxFiles + 1, MAP_SKIPPED_FOLDERS, {
    gitignore: true,
    depth: limits.maxDepth,
  });
  const truncated = listed.length > limits.maxFiles;
  // A linked worktree's `.git` is a file: git's pointer, nothing an agent works on.
  const paths = listed.slice(0, limits.maxFiles).filter((p) => p !== '.git');
  const definitions = new Map<string, MappedFile['definitions']>();
  const queryWords = new Set(splitWords(queryText));
  const touches = (path: string) => splitWords(path).some((w) => queryWords.has(w));
  const depth = (path: string) => path.split('/').length;
  const sources = paths
    .filter((p) => languageOf(p) !== null)
    .map((path) => ({ path, touched: touches(path), depth: depth(path) }))
    .sort(
      (a, b) =>
        Number(b.touched) - Number(a.touched) ||
        a.depth - b.depth ||
        (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
    )
    .slice(0, limits.maxReadFiles)
    .map((s) => s.path);

  let bytesRead = 0;
  for (let start = 0; start < sources.length && bytesRead < limits.maxReadBytes; start += READ_BATCH) {
    const batch = sources.slice(start, start + READ_BATCH);
    const byFolder = new Map<string, string[]>();
    for (const path of batch) {
      const slash = path.lastIndexOf('/');
      const folder = slash >= 0 ? path.slice(0, slash) : '.';
      const names = byFolder.get(folder) ?? [];
      names.push(path.slice(slash + 1));
      byFolder.set(folder, names);
    }
    const folders = [...byFolder];
    const readFolder = async ([folder, names]: [string, string[]]) => {
      let read: Awaited<ReturnType<WorkspaceFs['readFilesIn']>>;
      try {
        read = await ws.readFilesIn(folder, names, limits.maxFileBytes);
      } catch {
        return; // the folder was swapped for a link or removed since the listing: not read
      }
      names.forEach((name, i) => {
        const file = read[i];
        if (!file?.content) return;
        bytesRead += file.content.length;
        if (isBinary(file.content)) return;
        const path = folder === '.' ? name : `${folder}/${name}`;
        const language = languageOf(path);
        if (language) definitions.set(path, extractDefinitions(language, file.content.toString('utf8')));
      });
    };
    for (let i = 0; i < folders.length; i += READ_CONCURRENCY) {
      await Promise.all(folders.slice(i, i + READ_CONCURRENCY).map(readFolder));
    }
    // The reads block (see readFilesIn): let heartbeats and other activities run between batches.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return { files: paths.map((path) => ({ path, definitions: definitions.get(path) ?? null })), truncated };
}
