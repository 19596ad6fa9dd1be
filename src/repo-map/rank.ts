import type { Definition } from './definitions';
import { identifiers, splitWords, uniqueWords } from './terms';

export interface MappedFile {
  /** Workspace-relative, `/`-separated. */
  path: string;
  /** Null when the file was not read (not a source file, too large, binary, over the read budget). */
  definitions: Definition[] | null;
}

/** What the map is ranked against: the task, for later agents the plan too. */
export interface MapQuery {
  text: string;
  /** Paths named outright (the plan's `files`): always ranked first. */
  files?: readonly string[];
}

export interface RankedFile extends MappedFile {
  score: number;
  /**
   * Definitions the query points at, shown before the others: 2 for a name the query spells out
   * (`parse_invoice`), 1 for a name that shares a word with it (`Invoice`).
   */
  matching: Map<string, 1 | 2>;
}

const NAMED_FILE_SCORE = 1000;
const BASENAME_WEIGHT = 2;
const FOLDER_WEIGHT = 1;
const DEFINITION_WEIGHT = 1;
/** A definition named outright in the query (`parse_invoice`) says more than a shared word. */
const EXACT_NAME_SCORE = 4;
/** A test of what the task is about is worth reading next to the code, never ahead of it. */
const MATCHING_TEST_BONUS = 0.5;

const TEST_PATH =
  /(^|\/)(tests?|__tests__|specs?)\/|(^|\/)test_[^/]*\.py$|_test\.py$|\.(test|spec)\.[cm]?[jt]sx?$/;

export function isTestPath(path: string): boolean {
  return TEST_PATH.test(path);
}

interface FileWords {
  basename: Set<string>;
  folders: Set<string>;
  definitions: Set<string>;
  names: Set<string>;
}

function wordsOf(file: MappedFile): FileWords {
  const slash = file.path.lastIndexOf('/');
  const name = file.path.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  const definitions = new Set<string>();
  const names = new Set<string>();
  for (const definition of file.definitions ?? []) {
    names.add(definition.name.toLowerCase());
    for (const word of splitWords(definition.name)) definitions.add(word);
  }
  return {
    basename: uniqueWords(dot > 0 ? name.slice(0, dot) : name),
    folders: uniqueWords(slash >= 0 ? file.path.slice(0, slash) : ''),
    definitions,
    names,
  };
}

/**
 * Files by relevance to the query, most relevant first. A query word counts in proportion to how
 * rare it is in the repository (inverse document frequency), so a word every file shares, like a
 * package name, does not drown the one that names the feature. Ties, including every file the
 * query does not touch, go to shallower paths, then by path: the same input ranks the same way.
 */
export function rankFiles(files: readonly MappedFile[], query: MapQuery): RankedFile[] {
  const terms = [...uniqueWords(query.text)];
  const names = new Set(identifiers(query.text));
  const named = new Set((query.files ?? []).map(normalizePath));
  // Splitting every definition name of 20,000 files into words takes a third of a second; a file
  // whose path and names do not even contain a query word as a substring cannot match, so only
  // the others are split.
  // `categories` is normalized to `category`, which is no substring of it: look for `categor`.
  const needles = [...terms.map((t) => (t.endsWith('y') ? t.slice(0, -1) : t)), ...names];
  const candidate = files.map((file) => {
    if (named.has(file.path)) return true;
    const haystack = `${file.path}\n${(file.definitions ?? []).map((d) => d.name).join('\n')}`.toLowerCase();
    return needles.some((needle) => haystack.includes(needle));
  });
  const words = files.map((file, i) => (candidate[i] ? wordsOf(file) : null));
  const frequency = new Map<string, number>(terms.map((t) => [t, 0]));
  for (const w of words) {
    if (!w) continue;
    for (const term of terms) {
      if (w.basename.has(term) || w.folders.has(term) || w.definitions.has(term)) {
        frequency.set(term, (frequency.get(term) ?? 0) + 1);
      }
    }
  }
  const weight = new Map(
    terms.map((t) => [t, Math.log(1 + files.length / Math.max(1, frequency.get(t) ?? 0))] as const),
  );
  const ranked = files.map((file, i): RankedFile => {
    const w = words[i];
    if (!w) return { ...file, score: 0, matching: new Map() };
    let score = 0;
    for (const term of terms) {
      const idf = weight.get(term) ?? 0;
      if (w.basename.has(term)) score += BASENAME_WEIGHT * idf;
      else if (w.folders.has(term)) score += FOLDER_WEIGHT * idf;
      if (w.definitions.has(term)) score += DEFINITION_WEIGHT * idf;
    }
    for (const name of names) if (w.names.has(name)) score += EXACT_NAME_SCORE;
    if (named.has(file.path)) score += NAMED_FILE_SCORE;
    if (score > 0 && isTestPath(file.path)) score += MATCHING_TEST_BONUS;
    const matching = new Map<string, 1 | 2>();
    for (const definition of score > 0 ? (file.definitions ?? []) : []) {
      const lower = definition.name.toLowerCase();
      if (names.has(lower)) matching.set(definition.name, 2);
      else if (splitWords(definition.name).some((word) => weight.has(word))) matching.set(definition.name, 1);
    }
    return { ...file, score, matching };
  });
  const depth = new Map(files.map((f) => [f.path, f.path.split('/').length]));
  return ranked.sort(
    (a, b) =>
      b.score - a.score ||
      (depth.get(a.path) ?? 0) - (depth.get(b.path) ?? 0) ||
      (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
  );
}

function normalizePath(path: string): string {
  return path
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}
