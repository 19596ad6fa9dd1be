/**
 * Top-level definitions of Python, TypeScript and JavaScript files, found line by line.
 *
 * Why regexes and not a parser: tree-sitter needs native or WebAssembly grammars on every worker,
 * and the TypeScript compiler parses only TS/JS and takes seconds on a 20,000-file repository.
 * A map only needs the names an agent would look for; a definition that starts at column 0 is
 * top-level in Python and, by near-universal formatting, in TS/JS. The price: a `def` at column 0
 * inside a multi-line string is taken for a definition, and a definition written after other code
 * on the same line is missed. Both are rare and cost only a wrong or missing name in a hint.
 */

export type DefinitionKind =
  'def' | 'class' | 'function' | 'const' | 'interface' | 'type' | 'enum' | 'default';

export interface Definition {
  kind: DefinitionKind;
  name: string;
}

export type MapLanguage = 'python' | 'typescript' | 'javascript';

const EXTENSIONS: Record<string, MapLanguage> = {
  py: 'python',
  pyi: 'python',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
};

export function languageOf(path: string): MapLanguage | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return null;
  if (name.endsWith('.d.ts')) return 'typescript';
  return EXTENSIONS[name.slice(dot + 1).toLowerCase()] ?? null;
}

/** A file holds at most this many definitions in the map; generated code can hold thousands. */
export const MAX_DEFINITIONS_PER_FILE = 200;
/** Only a line's start is matched, so a megabyte-long line costs no more than a short one. */
const MATCHED_LINE_START = 300;
/** Like git: a NUL byte near the start means binary. */
const BINARY_PROBE_BYTES = 8000;

const PYTHON = /^(?:(async\s+def|def)\s+([A-Za-z_]\w*)|(class)\s+([A-Za-z_]\w*))/;

const ID = '([A-Za-z_$][\\w$]*)';
const TS_PATTERNS: Array<[RegExp, DefinitionKind]> = [
  [
    new RegExp(`^export\\s+(?:declare\\s+)?(?:default\\s+)?(?:async\\s+)?function\\b\\s*\\*?\\s*${ID}`),
    'function',
  ],
  [new RegExp(`^export\\s+(?:declare\\s+)?(?:default\\s+)?(?:abstract\\s+)?class\\s+${ID}`), 'class'],
  // Before `const`: `export const enum E` is an enum, not a constant named `enum`.
  [new RegExp(`^export\\s+(?:declare\\s+)?(?:const\\s+)?enum\\s+${ID}`), 'enum'],
  [new RegExp(`^export\\s+(?:declare\\s+)?(?:const|let|var)\\s+${ID}`), 'const'],
  [new RegExp(`^export\\s+(?:declare\\s+)?interface\\s+${ID}`), 'interface'],
  [new RegExp(`^export\\s+(?:declare\\s+)?type\\s+${ID}`), 'type'],
  [new RegExp(`^export\\s+default\\s+${ID}\\s*;?\\s*$`), 'default'],
  [new RegExp(`^(?:async\\s+)?function\\b\\s*\\*?\\s*${ID}`), 'function'],
  [new RegExp(`^(?:abstract\\s+)?class\\s+${ID}`), 'class'],
  // CommonJS: `module.exports.parse = ...` and `exports.parse = ...`.
  [new RegExp(`^(?:module\\.)?exports\\.${ID}\\s*=`), 'const'],
];
/** `export default` of something without a name (an object, an arrow function). */
const TS_ANONYMOUS_DEFAULT = /^export\s+default\b/;

/** Cheap first test: the first character every pattern of the language can start with. */
const PYTHON_STARTS = new Set(['d', 'a', 'c']);
const TS_STARTS = new Set(['e', 'a', 'f', 'c', 'm']);

export function isBinary(content: Buffer): boolean {
  return content.subarray(0, BINARY_PROBE_BYTES).includes(0);
}

/** The top-level definitions of a file's text, in the order they appear. */
export function extractDefinitions(language: MapLanguage, text: string): Definition[] {
  const found: Definition[] = [];
  const starts = language === 'python' ? PYTHON_STARTS : TS_STARTS;
  let lineStart = 0;
  while (lineStart < text.length && found.length < MAX_DEFINITIONS_PER_FILE) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd === -1) lineEnd = text.length;
    if (starts.has(text[lineStart])) {
      const line = text.slice(lineStart, Math.min(lineEnd, lineStart + MATCHED_LINE_START)).trimEnd();
      const definition = language === 'python' ? pythonDefinition(line) : scriptDefinition(line);
      if (definition) found.push(definition);
    }
    lineStart = lineEnd + 1;
  }
  return found;
}

function pythonDefinition(line: string): Definition | null {
  const match = PYTHON.exec(line);
  if (!match) return null;
  return match[2] !== undefined ? { kind: 'def', name: match[2] } : { kind: 'class', name: match[4] };
}

function scriptDefinition(line: string): Definition | null {
  for (const [pattern, kind] of TS_PATTERNS) {
    const match = pattern.exec(line);
    if (match) return { kind, name: match[1] };
  }
  if (TS_ANONYMOUS_DEFAULT.test(line)) return { kind: 'default', name: 'default' };
  return null;
}
