import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { clipEnd } from '../shared/clip-text';
import { ModelBehaviorError } from '../shared/errors';
import { findExecutable } from '../shared/executables';
import { defineWorkspaceTool } from './tool';
import { pathSegments, withWorkspace } from './workspace-fs';

export const MAX_SEARCH_RESULTS = 500;
const DEFAULT_SEARCH_RESULTS = 100;
const SEARCH_TIMEOUT_MS = 10_000;
const MAX_MATCH_CHARS = 400;
/** Never searched, like list_files: dependencies and caches. */
const SKIPPED = ['node_modules', '__pycache__', '.pytest_cache', '.aca', '.venv', 'venv'];
/**
 * Names of git directories and of `.git` files pointing at one, in any case and as the 8.3 short
 * name: never searched, as file or folder, at any depth (a repository planted by a test is no
 * workspace content, and its files would be read as such).
 */
const GIT_NAMES = ['.git', 'git~1'];
/**
 * The git directory git grep is told to use: one that can never exist (`/dev/null` is no folder),
 * so nothing planted anywhere becomes its repository, config, excludes or attributes.
 */
const NO_REPOSITORY = '/dev/null/aca-no-repository';

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
}

/**
 * `search_files`: `git grep --no-index` (Perl-compatible patterns through PCRE2, whose match limits
 * turn a catastrophic pattern into an error instead of a hang) over the files list_files shows.
 * It never follows a link, reads no repository and no config (nor any git directory or `.git` file
 * of the workspace), is killed after 10 s, and stops reading at the result limit.
 */
export const searchFilesTool = defineWorkspaceTool({
  name: 'search_files',
  description:
    'Search the workspace for a regular expression (Perl syntax), line by line, over the files list_files shows. Answers matches with path, line number and text.',
  parameters: z.strictObject({
    pattern: z.string().min(1).max(2000).describe('A regular expression, e.g. "def \\\\w+\\\\(" or "TODO".'),
    path: z
      .string()
      .optional()
      .describe('Folder to search, relative to the workspace root; the root when omitted.'),
    glob: z
      .string()
      .max(200)
      .optional()
      .describe('Only files matching this glob, e.g. "*.py" or "src/**/*.ts".'),
    max_results: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`At most this many matches (${DEFAULT_SEARCH_RESULTS}; at most ${MAX_SEARCH_RESULTS}).`),
  }),
  target: (args) => args.pattern,
  async execute(ctx, args) {
    const folder = args.path && args.path !== '.' ? pathSegments(args.path).join('/') : '.';
    // Opened through the link-refusing walk: the folder must be a real folder of the workspace.
    await withWorkspace(ctx.workspace, async (ws) => (await ws.openFolder(folder)).close());
    const limit = Math.min(args.max_results ?? DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS);
    const { matches, truncated } = await gitGrep(fs.realpathSync(ctx.workspace), {
      pattern: args.pattern,
      pathspec: pathspecFor(folder, args.glob),
      limit,
    });
    return { ok: true, matches, ...(truncated ? { truncated: true } : {}) };
  },
});

function pathspecFor(folder: string, glob: string | undefined): string[] {
  const excluded = [
    ...SKIPPED.map((name) => `:(exclude,glob)**/${name}/**`),
    ...GIT_NAMES.flatMap((name) => [`:(exclude,glob,icase)**/${name}/**`, `:(exclude,glob,icase)**/${name}`]),
  ];
  if (glob === undefined) return [folder === '.' ? '.' : `:(literal)${folder}`, ...excluded];
  if (glob.startsWith('/') || glob.startsWith(':') || glob.split('/').includes('..')) {
    throw new ModelBehaviorError(
      `glob "${glob}" must be relative to the folder searched, without "..": e.g. "*.py"`,
    );
  }
  const base = folder === '.' ? '' : `${folder}/`;
  return [`:(glob)${base}${glob.includes('/') ? glob : `**/${glob}`}`, ...excluded];
}

async function gitGrep(
  root: string,
  query: { pattern: string; pathspec: string[]; limit: number },
): Promise<{ matches: SearchMatch[]; truncated: boolean }> {
  const git = findExecutable('git', '/usr/bin:/bin:/usr/local/bin');
  if (!git) throw new Error('search_files needs git on the worker (apt-get install git)');
  const args = [
    'grep',
    '--no-index',
    '--exclude-standard',
    '-z',
    '-n',
    '-I',
    '--no-color',
    '-P',
    '-e',
    query.pattern,
    '--',
    ...query.pathspec,
  ];
  const child = spawn(git, args, {
    cwd: root,
    env: {
      PATH: '/usr/bin:/bin',
      HOME: '/nonexistent',
      LC_ALL: 'C.UTF-8',
      // No repository, no config: nothing in the workspace may configure this git.
      GIT_DIR: NO_REPOSITORY,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CEILING_DIRECTORIES: path.dirname(root),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const matches: SearchMatch[] = [];
  let truncated = false;
  let pending = '';
  let stderr = '';
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, SEARCH_TIMEOUT_MS);
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString();
  });
  child.stdout.on('data', (chunk: Buffer) => {
    if (truncated) return;
    pending += chunk.toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) !== -1) {
      const record = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      const [file, line, ...rest] = record.split('\0');
      if (file === undefined || line === undefined) continue;
      if (matches.length >= query.limit) {
        truncated = true;
        child.kill('SIGKILL');
        return;
      }
      matches.push({ path: file, line: Number(line), text: clipEnd(rest.join('\0'), MAX_MATCH_CHARS) });
    }
    // One absurdly long line must not grow the buffer without bound.
    if (pending.length > 1_000_000) pending = pending.slice(0, 1_000_000);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode) => resolve(exitCode));
  }).finally(() => clearTimeout(timer));
  if (timedOut)
    throw new ModelBehaviorError(
      `the search took longer than ${SEARCH_TIMEOUT_MS / 1000} s; use a simpler pattern or a narrower path`,
    );
  if (truncated || code === 0 || code === 1) return { matches, truncated };
  const reason = stderr.trim().split('\n').pop() ?? `git grep exited with ${String(code)}`;
  throw new ModelBehaviorError(`search_files failed: ${reason.replace(/^fatal: /, '')}`);
}
