/**
 * The project's instructions for its agents, as the repository's base commit has them: the
 * AGENTS.md convention and the files other coding agents read (CLAUDE.md, CONVENTIONS.md,
 * .github/copilot-instructions.md), the AGENTS.md of each folder the plan names, and the user's
 * own `--instructions`. Only the base commit is read, never a work tree: a file an agent of the
 * run wrote must not instruct the next agent.
 *
 * The repository is hostile: a link is a blob git names with mode 120000 and is never followed
 * (it could point at /etc/shadow on the worker), a blob of any size is read only as far as the
 * budget could use, a binary one is left out, and control characters are dropped.
 */
import { clipEnd } from '../../shared/clip-text';
import { git, gitBytesStart, type GitTarget } from '../git/git';

/** Files read at the repository's root, in the order they are shown. */
export const ROOT_INSTRUCTION_FILES = [
  'AGENTS.md',
  'CLAUDE.md',
  'CONVENTIONS.md',
  '.github/copilot-instructions.md',
] as const;

/** The file read in each folder the plan names, outermost first, nearest last. */
export const NESTED_INSTRUCTION_FILE = 'AGENTS.md';

/** How the user's own instructions (`--instructions FILE`) are named among the files. */
export const INSTRUCTIONS_OPTION = '--instructions';

/** What the project instructions may take when nothing smaller is asked for. */
export const DEFAULT_INSTRUCTION_TOKENS = 8_000;

/** As the repository map estimates: prose runs near four characters a token. */
const CHARS_PER_TOKEN = 4;
/** Plan entries looked at, and folders whose AGENTS.md is looked for: a plan is model output. */
const MAX_PLAN_PATHS = 64;
const MAX_FOLDERS = 32;
const MAX_PATH_CHARS = 1024;
/** A section with less room than this is left out rather than shown as a stub. */
const MIN_SECTION_CHARS = 400;
/** Room kept for the closing note when anything is clipped or left out. */
const NOTE_CHARS = 600;
/** How much of a path a header or note shows. */
const SHOWN_PATH_CHARS = 160;
/** As git judges a blob binary: a NUL byte among its first bytes. */
const BINARY_PROBE_BYTES = 8_000;

export interface ProjectInstructionsRequest {
  /** A git directory holding the run's objects (a worktree's common directory). */
  git: GitTarget;
  /** The run's base commit, a full commit id. */
  baseCommit: string;
  /** Files and folders the plan names, repository-relative; none for the Planner's turn. */
  paths: readonly string[];
  /** The user's own instructions for the run (`--instructions`), shown last. */
  extra?: string | null;
  /** The length of the user's whole text, when `extra` is only its start. */
  extraChars?: number;
  /** What the whole section may take, in estimated tokens. */
  budgetTokens: number;
}

/** One file that went into the text. */
export interface InstructionFile {
  /** Its repository path, or `--instructions`. */
  path: string;
  /** The estimated tokens of what was kept of it. */
  tokens: number;
  /** Only its start was kept. */
  clipped: boolean;
}

export interface ProjectInstructions {
  /** The sections, each under a line naming its file, and a note of what was left out; '' for none. */
  text: string;
  files: InstructionFile[];
  /** Files of the base commit that went in not at all: links, binary files, no room left. */
  omitted: string[];
}

interface Section {
  path: string;
  body: string;
  /** Estimated tokens of the whole file. */
  fullTokens: number;
  /** Only its start was read: the file is larger than the budget could ever show. */
  readInPart: boolean;
}

interface Candidate {
  path: string;
  /** Lower comes first when room runs out. */
  priority: number;
}

const tokensOf = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** The project's instructions from `baseCommit`, within `budgetTokens`. */
export async function readProjectInstructions(
  request: ProjectInstructionsRequest,
): Promise<ProjectInstructions> {
  const { baseCommit } = request;
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(baseCommit)) {
    throw new Error(`"${baseCommit}" is not a full commit id`);
  }
  const budgetChars = Math.max(0, Math.floor(request.budgetTokens)) * CHARS_PER_TOKEN;
  const candidates = candidateFiles(request.paths);
  const omitted: string[] = [];
  const notes: string[] = [];
  const sections: Section[] = [];
  const priorities = new Map<string, number>();
  const found = await listBlobs(
    request.git,
    baseCommit,
    candidates.map((c) => c.path),
  );
  for (const candidate of candidates) {
    const entry = found.get(candidate.path);
    if (!entry) continue;
    if (entry.mode !== '100644' && entry.mode !== '100755') {
      omitted.push(candidate.path);
      notes.push(
        `${shownPath(candidate.path)} was not read: ${entry.mode === '120000' ? 'a symbolic link' : 'not a file'}`,
      );
      continue;
    }
    // Enough bytes to fill the whole budget even at four bytes a character, never the whole blob.
    const readBytes = Math.min(entry.size, budgetChars * 4);
    const bytes =
      readBytes > 0
        ? await gitBytesStart(request.git, ['cat-file', 'blob', entry.oid], readBytes)
        : Buffer.alloc(0);
    if (bytes.subarray(0, BINARY_PROBE_BYTES).includes(0)) {
      omitted.push(candidate.path);
      notes.push(`${shownPath(candidate.path)} was not read: not text`);
      continue;
    }
    const body = cleanText(new TextDecoder('utf-8').decode(bytes)).trim();
    if (!body) continue;
    const readInPart = bytes.length < entry.size;
    sections.push({
      path: candidate.path,
      body,
      fullTokens: readInPart ? tokensOf(entry.size) : tokensOf(body.length),
      readInPart,
    });
    priorities.set(candidate.path, candidate.priority);
  }
  const extra = cleanText(request.extra ?? '').trim();
  if (extra) {
    const chars = Math.max(request.extra!.length, request.extraChars ?? 0);
    sections.push({
      path: INSTRUCTIONS_OPTION,
      body: extra,
      fullTokens: tokensOf(chars),
      readInPart: chars > request.extra!.length,
    });
    priorities.set(INSTRUCTIONS_OPTION, ROOT_INSTRUCTION_FILES.length);
  }
  return fitSections(sections, priorities, budgetChars, omitted, notes);
}

/**
 * The files to look for, in the order they are shown: the root's, then each plan folder's
 * AGENTS.md from the outermost to the nearest. Room goes first to the root's files, then to the
 * user's own, then to the nearest folders'.
 */
function candidateFiles(planPaths: readonly string[]): Candidate[] {
  const root = ROOT_INSTRUCTION_FILES.map((path, index) => ({ path, priority: index }));
  const folders = new Set<string>();
  for (const raw of planPaths.slice(0, MAX_PLAN_PATHS)) {
    const parts = planPathParts(raw);
    // Each folder on the way, and the path itself, which may name a folder.
    for (let depth = 1; parts && depth <= parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
  }
  const nested = [...folders]
    .sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, MAX_FOLDERS);
  const firstNested = ROOT_INSTRUCTION_FILES.length + 1;
  return [
    ...root,
    ...nested.map((folder, index) => ({
      path: `${folder}/${NESTED_INSTRUCTION_FILE}`,
      priority: firstNested + (nested.length - index),
    })),
  ];
}

/** The parts of a repository-relative path the plan named; null for one that leaves the repository. */
function planPathParts(raw: string): string[] | null {
  if (typeof raw !== 'string' || raw.length > MAX_PATH_CHARS || /[\0\n]/.test(raw)) return null;
  if (raw.startsWith('/')) return null;
  const parts = raw.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.some((part) => part === '..' || part === '.git')) return null;
  return parts;
}

interface TreeEntry {
  mode: string;
  oid: string;
  size: number;
}

/** The entries of `paths` at `commit`, by path (one git call; paths taken literally, never as patterns). */
async function listBlobs(
  target: GitTarget,
  commit: string,
  paths: string[],
): Promise<Map<string, TreeEntry>> {
  const entries = new Map<string, TreeEntry>();
  const wanted = new Set(paths);
  const listing = await git(target, [
    '--literal-pathspecs',
    'ls-tree',
    '-z',
    '-l',
    '--full-tree',
    '--end-of-options',
    commit,
    '--',
    ...paths,
  ]);
  for (const line of listing.split('\0')) {
    const match = /^(\d{6}) (\w+) ([0-9a-f]+) +(\d+|-)\t(.+)$/s.exec(line);
    if (!match || !wanted.has(match[5]!)) continue;
    entries.set(match[5]!, {
      mode: match[2] === 'blob' ? match[1]! : match[2]!,
      oid: match[3]!,
      size: match[4] === '-' ? 0 : Number(match[4]),
    });
  }
  return entries;
}

/**
 * Text as a prompt may hold it: line breaks made `\n`, and no control character (a terminal
 * escape, a NUL), invisible bidi override or tag character left to hide or reorder what a
 * person reading the conversation sees, nor half of a surrogate pair (no encoding can store it).
 */
function cleanText(text: string): string {
  return text
    .replace(/^\ufeff/, '')
    .replace(/\r\n?|[\u2028\u2029]/g, '\n')
    .replace(
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u200e\u200f\u202a-\u202e\u2060-\u2069\ufeff\ud800-\udfff]|[\u{e0000}-\u{e007f}]/gu,
      '',
    );
}

/** A path as a header or note shows it: on one line, and short. */
function shownPath(path: string): string {
  return clipEnd(path.replace(/[\p{Cc}\p{Cf}]/gu, '?'), SHOWN_PATH_CHARS);
}

const header = (path: string): string => `=== ${shownPath(path)} ===\n`;
const clippedMarker = (path: string, leftTokens: number): string =>
  `\n[… the rest of ${shownPath(path)}, about ${leftTokens} tokens, is left out]`;
/** Between two sections. */
const GAP = '\n\n';

/**
 * Lays the sections out within `budgetChars`: each keeps its start, and room is shared so that
 * a huge file cannot crowd out a small one (a file smaller than its share keeps all of it, the
 * rest share what is left). With too little room for every section, the last in priority go.
 */
function fitSections(
  sections: Section[],
  priorities: Map<string, number>,
  budgetChars: number,
  omitted: string[],
  notes: string[],
): ProjectInstructions {
  // The marker's room is counted with the figure it can show at most.
  const markerLength = (s: Section) => clippedMarker(s.path, s.fullTokens).length;
  const cost = (s: Section) =>
    header(s.path).length + s.body.length + GAP.length + (s.readInPart ? markerLength(s) : 0);
  const whole = sections.reduce((sum, s) => sum + cost(s), 0);
  const kept = new Map<Section, number>();
  if (whole <= budgetChars - (notes.length ? NOTE_CHARS : 0)) {
    for (const s of sections) kept.set(s, s.body.length);
  } else {
    const room = budgetChars - NOTE_CHARS;
    const included = [...sections].sort((a, b) => priorities.get(a.path)! - priorities.get(b.path)!);
    while (included.length && room / included.length < MIN_SECTION_CHARS) included.pop();
    let left = room;
    const byCost = [...included].sort((a, b) => cost(a) - cost(b));
    byCost.forEach((s, index) => {
      const share = Math.floor(left / (byCost.length - index));
      const given = Math.min(cost(s), share);
      left -= given;
      const marker = given < cost(s) || s.readInPart ? markerLength(s) : 0;
      kept.set(s, Math.max(0, given - header(s.path).length - GAP.length - marker));
    });
  }
  const parts: string[] = [];
  const files: InstructionFile[] = [];
  for (const s of sections) {
    const chars = kept.get(s);
    if (chars === undefined || chars === 0) {
      omitted.push(s.path);
      notes.push(`${shownPath(s.path)} was left out: no room`);
      continue;
    }
    const clipped = chars < s.body.length || s.readInPart;
    const body = clipped ? startOf(s.body, chars) : s.body;
    const left = Math.max(1, s.fullTokens - tokensOf(body.length));
    parts.push(`${header(s.path)}${body}${clipped ? clippedMarker(s.path, left) : ''}`);
    files.push({ path: s.path, tokens: tokensOf(body.length), clipped });
    if (clipped) notes.push(`only the start of ${shownPath(s.path)} is shown`);
  }
  if (notes.length) {
    const room = Math.min(NOTE_CHARS, budgetChars - parts.join(GAP).length - GAP.length);
    if (room > 0)
      parts.push(
        clipEnd(`[Project instructions within ${tokensOf(budgetChars)} tokens: ${notes.join('; ')}.]`, room),
      );
  }
  return { text: parts.join(GAP), files, omitted };
}

/** The first `chars` characters, ending at a line break when one is near the end. */
function startOf(text: string, chars: number): string {
  const cut = text.slice(0, chars).replace(/[\ud800-\udbff]$/, '');
  const lineEnd = cut.lastIndexOf('\n');
  return (lineEnd > chars * 0.75 ? cut.slice(0, lineEnd) : cut).trimEnd();
}
