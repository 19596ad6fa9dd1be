import type { Definition } from './definitions';
import type { RankedFile } from './rank';

/** Tokens as the map counts them: a character in four, near enough for English and code. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Per file, the definitions named on its line; the rest are counted. */
const MAX_SHOWN_DEFINITIONS = 12;
const MAX_NAME_CHARS = 80;
/** Per expanded folder, the untouched subfolders listed by name; the rest become a count. */
const MAX_COLLAPSED_FOLDERS = 10;
/** Files whose definitions may be shown, from the top of the ranking. */
const MAX_DETAILED_FILES = 40;
const INDENT = '  ';
/** Per folder, the files no query word touches that may still be listed by name. */
const MAX_UNRANKED_PER_FOLDER = 5;

interface FolderNode {
  name: string;
  path: string;
  folders: FolderNode[];
  files: RankedFile[];
  /** Files in the whole subtree. */
  total: number;
}

/**
 * Names come from a workspace that code under test wrote: a newline in a file name must not start
 * a line of its own in the prompt (it could pose as a heading or an instruction), so every control
 * character, and the Unicode line separators, is shown escaped.
 */
export function safeName(text: string, max = MAX_NAME_CHARS): string {
  const escaped = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const code = c.charCodeAt(0);
    if (code === 10) return '\\n';
    if (code === 13) return '\\r';
    if (code === 9) return '\\t';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return escaped.length > max ? `${escaped.slice(0, max - 1)}…` : escaped;
}

function buildTree(files: readonly RankedFile[]): FolderNode {
  const root: FolderNode = { name: '', path: '', folders: [], files: [], total: 0 };
  const index = new Map<string, FolderNode>([['', root]]);
  for (const file of files) {
    const parts = file.path.split('/');
    let folder = root;
    folder.total++;
    for (let i = 0; i < parts.length - 1; i++) {
      const path = parts.slice(0, i + 1).join('/');
      let child = index.get(path);
      if (!child) {
        child = { name: parts[i], path, folders: [], files: [], total: 0 };
        index.set(path, child);
        folder.folders.push(child);
      }
      child.total++;
      folder = child;
    }
    folder.files.push(file);
  }
  const byName = (a: { name: string }, b: { name: string }) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  const sortAll = (folder: FolderNode) => {
    folder.folders.sort(byName);
    folder.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    folder.folders.forEach(sortAll);
  };
  sortAll(root);
  return root;
}

function describeDefinition(d: Definition): string {
  if (d.kind === 'default')
    return d.name === 'default' ? 'export default' : `export default ${safeName(d.name)}`;
  return `${d.kind} ${safeName(d.name)}`;
}

function fileLine(file: RankedFile, detailed: boolean): string {
  const name = safeName(file.path.slice(file.path.lastIndexOf('/') + 1));
  const definitions = file.definitions ?? [];
  if (!detailed || definitions.length === 0) return name;
  // A stable sort: within each group, the order of the file.
  const ordered = [...definitions].sort(
    (a, b) => (file.matching.get(b.name) ?? 0) - (file.matching.get(a.name) ?? 0),
  );
  const shown = ordered.slice(0, MAX_SHOWN_DEFINITIONS).map(describeDefinition);
  const more = ordered.length - shown.length;
  return `${name}: ${shown.join(', ')}${more > 0 ? `, … ${more} more` : ''}`;
}

type Levels = ReadonlyMap<string, 'path' | 'detailed'>;

function countVisible(levels: Levels): Map<string, number> {
  const visible = new Map<string, number>();
  for (const path of levels.keys()) {
    const parts = path.split('/');
    visible.set('', (visible.get('') ?? 0) + 1);
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/');
      visible.set(folder, (visible.get(folder) ?? 0) + 1);
    }
  }
  return visible;
}

function renderTree(root: FolderNode, levels: Levels): string[] {
  const visible = countVisible(levels);
  const lines: string[] = [];
  const walk = (folder: FolderNode, indent: string) => {
    let collapsedShown = 0;
    let hiddenFiles = 0;
    let hiddenFolders = 0;
    for (const sub of folder.folders) {
      if ((visible.get(sub.path) ?? 0) > 0) {
        // A chain of folders that each hold one folder and nothing else takes one line.
        let chain = sub;
        let label = safeName(sub.name);
        while (chain.files.length === 0 && chain.folders.length === 1) {
          chain = chain.folders[0];
          label += `/${safeName(chain.name)}`;
        }
        lines.push(`${indent}${label}/`);
        walk(chain, indent + INDENT);
      } else if (collapsedShown < MAX_COLLAPSED_FOLDERS) {
        collapsedShown++;
        lines.push(`${indent}${safeName(sub.name)}/ (${plural(sub.total, 'file')})`);
      } else {
        hiddenFolders++;
        hiddenFiles += sub.total;
      }
    }
    let hiddenHere = 0;
    for (const file of folder.files) {
      const level = levels.get(file.path);
      if (level) lines.push(indent + fileLine(file, level === 'detailed'));
      else hiddenHere++;
    }
    hiddenFiles += hiddenHere;
    if (hiddenFiles > 0) {
      const where =
        hiddenFolders > 0 ? ` (${hiddenHere} here, the rest in ${plural(hiddenFolders, 'folder')})` : '';
      lines.push(`${indent}… ${plural(hiddenFiles, 'more file')}${where}`);
    }
  };
  walk(root, '');
  return lines;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export interface RenderOptions {
  /** Characters the lines may take in all, newlines between them included. */
  maxChars: number;
  /** Only files with a positive score are listed (the part relevant to a plan). */
  onlyRelevant: boolean;
}

/**
 * The map's lines within `maxChars`. First as many of the top-ranked files as fit are shown with
 * their definitions (nothing else listed), then as many further files as fit are added as bare
 * paths, in rank order (the files no query word touches after the others, see `unranked`);
 * untouched folders stay one `name/ (N files)` line. Each count is found by
 * bisection over full renders, a dozen or two of them, so the result is exact rather than
 * estimated. Should even the fully collapsed tree not fit, its lines are cut and the cut is said.
 */
export function renderMap(ranked: readonly RankedFile[], options: RenderOptions): string[] {
  const root = buildTree(ranked);
  const size = (lines: string[]) => lines.reduce((n, line) => n + line.length + 1, 0) - 1;
  const relevant = ranked.filter((f) => f.score > 0);
  const others = options.onlyRelevant ? [] : unranked(ranked);
  // In a small repository everything fits: then the files no query word touches show their
  // definitions too, after the relevant ones.
  const detailCandidates = [...relevant, ...others]
    .filter((f) => (f.definitions?.length ?? 0) > 0)
    .slice(0, MAX_DETAILED_FILES);
  const pathCandidates = [...relevant, ...others];
  // A listed path takes at least a few characters: more than this many can never fit.
  const maxPaths = Math.min(pathCandidates.length, Math.floor(options.maxChars / 3));

  const levelsFor = (detailed: number, paths: number): Levels => {
    const levels = new Map<string, 'path' | 'detailed'>();
    for (let i = 0; i < paths; i++) levels.set(pathCandidates[i].path, 'path');
    for (let i = 0; i < detailed; i++) levels.set(detailCandidates[i].path, 'detailed');
    return levels;
  };
  const fits = (detailed: number, paths: number) =>
    size(renderTree(root, levelsFor(detailed, paths))) <= options.maxChars;

  const largest = (hi: number, ok: (n: number) => boolean): number => {
    let lo = 0;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (ok(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const detailed = largest(detailCandidates.length, (n) => fits(n, 0));
  const paths = largest(maxPaths, (n) => fits(detailed, n));
  const lines = renderTree(root, levelsFor(detailed, paths));
  if (size(lines) <= options.maxChars) return lines;
  return cutLines(lines, options.maxChars);
}

/**
 * The files no query word touches, in the order they are worth a line: a few of each folder,
 * shallow folders first and breadth before depth, so that the room left shows the repository's
 * shape (README, setup files, the first modules of each package) rather than one folder's
 * hundredth file.
 */
function unranked(ranked: readonly RankedFile[]): RankedFile[] {
  const byFolder = new Map<string, RankedFile[]>();
  for (const file of ranked) {
    if (file.score > 0) continue;
    const folder = file.path.slice(0, Math.max(0, file.path.lastIndexOf('/')));
    const files = byFolder.get(folder) ?? [];
    files.push(file);
    byFolder.set(folder, files);
  }
  const picked: Array<{ file: RankedFile; depth: number; index: number }> = [];
  for (const files of byFolder.values()) {
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    files.slice(0, MAX_UNRANKED_PER_FOLDER).forEach((file, index) => {
      picked.push({ file, depth: file.path.split('/').length, index });
    });
  }
  return picked
    .sort(
      (a, b) =>
        a.depth - b.depth ||
        a.index - b.index ||
        (a.file.path < b.file.path ? -1 : a.file.path > b.file.path ? 1 : 0),
    )
    .map((p) => p.file);
}

function cutLines(lines: string[], maxChars: number): string[] {
  const kept: string[] = [];
  let used = 0;
  const separator = () => (kept.length ? 1 : 0);
  for (let i = 0; i < lines.length; i++) {
    const after = used + separator() + lines[i].length;
    const last = i === lines.length - 1;
    const roomForMarker = after + 1 + cutMarker(lines.length - i - 1).length <= maxChars;
    if (after <= maxChars && (last || roomForMarker)) {
      kept.push(lines[i]);
      used = after;
      continue;
    }
    const marker = cutMarker(lines.length - i);
    if (used + separator() + marker.length <= maxChars) kept.push(marker);
    return kept;
  }
  return kept;
}

function cutMarker(cut: number): string {
  return `… ${plural(cut, 'more line')} cut to fit the token budget`;
}
