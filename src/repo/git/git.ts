/**
 * Runs git for aca on a work tree that model-written code has had its hands on. Nothing the code
 * under test can write may change what git executes or where it writes:
 *
 * - The git directory is always given (GIT_DIR) and never discovered: a `.git` file or folder
 *   rewritten in the work tree, pointing at a git directory the test made, is never read.
 * - Only the repository's own config is read (it lives outside the sandbox): no system or global
 *   config, and hooks, fsmonitor, the untracked cache and submodule recursion are pinned off.
 * - Filter, diff and merge drivers that the repository's config defines are switched off for
 *   every call, so a `.gitattributes` the test wrote cannot name one; external diff and textconv
 *   are refused on the command line.
 * - The environment is built from nothing: no GIT_* variable of the worker's reaches git.
 * - A call that reaches the git store (store-access.ts) opens that store's protocol only, gets no
 *   credential helper or askpass program, never prompts, and is killed, helpers and all, at a
 *   time limit. No other call may reach beyond the machine.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runViaHelper } from '../../process';
import { findExecutable } from '../../shared/executables';
import { SystemError } from '../../shared/errors';
import { IrregularFileError, readRegularFile } from '../../shared/regular-file';

/**
 * What one git call runs with, in any repository (the user's, the store, an evaluation's copy).
 * A run's files are located by RunPlace (src/shared/run-types.ts), which is a GitTarget as it
 * stands: a run's git is called with its place; a call that only reads objects or branches
 * names the run's common directory alone.
 */
export interface GitTarget {
  /** The git directory (for a linked worktree, its `.git/worktrees/<name>` folder). */
  gitDir: string;
  /** The work tree git reads and writes files in, if the command needs one. */
  workTree?: string;
}

/** A git command that failed or hung; callers read the exit code and stderr to say why. */
export class GitError extends SystemError {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    /** Killed at its time limit (a network call that hung); exitCode is then null. */
    readonly timedOut = false,
  ) {
    super(
      `git ${args.join(' ')} ${timedOut ? 'timed out' : `failed (exit ${String(exitCode)})`}: ${stderr.trim().split('\n').slice(-3).join(' ')}`,
    );
  }
}

/**
 * What a call that reaches another repository (the git store) may use beyond the pins: the one
 * protocol it needs, settings of its own, a few variables of the worker's (ssh's keys live in the
 * worker user's home), and a time limit, since a network call can hang.
 */
export interface GitNetworkAccess {
  config: string[];
  env: Record<string, string>;
  timeoutMs: number;
}

/** The identity of aca's commits unless the caller gives another. */
export const ACA_AUTHOR = { name: 'aca', email: 'aca@localhost' } as const;

const PINNED_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  // A file the code under test changed and then gave its old size and mtime still differs in
  // ctime, which no unprivileged process can set: git must look at it.
  'core.trustctime=true',
  'core.checkStat=default',
  'core.attributesFile=/dev/null',
  'core.sshCommand=false',
  'diff.external=',
  'diff.ignoreSubmodules=all',
  'status.submoduleSummary=false',
  'submodule.recurse=false',
  'protocol.allow=never',
  'protocol.file.allow=always',
  // The repository is the user's own and the git directory is named explicitly; running as root
  // on a folder another user owns must not stop the worker.
  'safe.directory=*',
  'gc.auto=0',
  'maintenance.auto=false',
];

const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
/** More than one read of a pipe gives (64 KiB on Linux). */
const PIPE_CHUNK_ROOM = 256 * 1024;

function gitBinary(): string {
  const found = findExecutable('git', '/usr/bin:/bin:/usr/local/bin');
  if (!found) throw new Error('git is not installed (apt-get install git)');
  return found;
}

function baseEnv(target: GitTarget): NodeJS.ProcessEnv {
  return {
    PATH: '/usr/bin:/bin',
    HOME: '/nonexistent',
    LC_ALL: 'C',
    GIT_DIR: target.gitDir,
    ...(target.workTree ? { GIT_WORK_TREE: target.workTree } : {}),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
  };
}

interface ExecResult {
  stdout: string;
  stderr: string;
  code: number | null;
  timedOut: boolean;
}

/**
 * Runs git through the worker's small spawn helper: started from the worker itself, each call
 * would pay for a fork of the whole worker (tens of ms for a big one, with its event loop
 * stopped). With a time limit (a network call) git gets a process group of its own, killed with
 * everything in it at the limit: killing git alone would leave its helpers (ssh, the http
 * transport) holding the output pipes open.
 */
interface ExecOptions {
  cwd?: string;
  /** 0: no limit. */
  timeoutMs?: number;
  /** Written to git's stdin. */
  input?: Buffer;
  /** Keep what came before git passed this much output and kill it, rather than fail the call. */
  keepStart?: number;
}

async function execBytes(
  args: string[],
  env: NodeJS.ProcessEnv,
  { cwd = '/', timeoutMs = 0, input, keepStart }: ExecOptions = {},
): Promise<{ stdout: Buffer; stderr: Buffer; code: number | null; timedOut: boolean }> {
  const result = await runViaHelper({
    command: gitBinary(),
    args,
    cwd,
    env: env as Record<string, string>,
    timeoutMs,
    maxOutputBytes: keepStart ?? MAX_OUTPUT_BYTES,
    ...(input ? { input } : {}),
  });
  if (result.overflowed && keepStart !== undefined) {
    return { stdout: result.stdout, stderr: result.stderr, code: 0, timedOut: false };
  }
  if (result.overflowed) {
    throw Object.assign(new Error(`git ${args.join(' ')}: output over ${MAX_OUTPUT_BYTES} bytes`), {
      code: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER',
    });
  }
  return { stdout: result.stdout, stderr: result.stderr, code: result.code, timedOut: result.timedOut };
}

async function exec(args: string[], env: NodeJS.ProcessEnv, options: ExecOptions = {}): Promise<ExecResult> {
  const result = await execBytes(args, env, options);
  return { ...result, stdout: result.stdout.toString('utf8'), stderr: result.stderr.toString('utf8') };
}

/**
 * Driver pins by the bytes of the config files they were read from: equal bytes give equal pins,
 * whichever git directory holds them, so a call whose config was seen before (a new run's
 * repository has the same config as the last one's) runs one git process instead of two. A
 * config that includes other files is read by git every time.
 */
const pinsCache = new Map<string, string[]>();
const PINS_CACHE_SIZE = 256;

/** Bounds of what configKey reads; a larger config is read by git every time rather than hashed. */
const MAX_COMMONDIR_BYTES = 64 * 1024;
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * One of git's own files of the git directory, read as git reads it (through a link), but never
 * opened in a way that blocks and only as a regular file. git itself would block forever reading
 * a FIFO there, and a device would never end (/dev/zero) or act when opened: those are an
 * IrregularFileError, so no git process is started to hang on them. What git refuses by itself
 * (a folder, a socket) and a regular file over the bound are 'uncached': git reads them.
 */
function readGitFile(file: string, maxBytes: number): Buffer | null | 'uncached' {
  try {
    return readRegularFile(file, { maxBytes, followLinks: true });
  } catch (err) {
    if (!(err instanceof IrregularFileError)) return 'uncached';
    if (err.kind === 'too large' || err.kind === 'directory' || err.kind === 'socket') return 'uncached';
    throw err;
  }
}

/** The folder with links resolved, as the kernel goes through it; as given when it cannot be. */
function realDir(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * What git reads for the repository's config (no system or global config), or null when not
 * cacheable. Throws IrregularFileError for a config file git would block on or never finish.
 */
function configKey(gitDir: string): string | null {
  const commonFile = readGitFile(path.join(gitDir, 'commondir'), MAX_COMMONDIR_BYTES);
  if (commonFile === 'uncached') return null;
  // As git reads it: only a trailing line break is dropped, and a relative path is taken from
  // where the git directory really is.
  const commonDir = commonFile
    ? path.resolve(realDir(gitDir), commonFile.toString('utf8').replace(/[\r\n]+$/, ''))
    : gitDir;
  const parts = [commonFile];
  for (const file of [path.join(commonDir, 'config'), path.join(gitDir, 'config.worktree')]) {
    const part = readGitFile(file, MAX_CONFIG_BYTES);
    if (part === 'uncached') return null;
    parts.push(part);
  }
  const hash = crypto.createHash('sha256');
  for (const part of parts) {
    if (part && /include/i.test(part.toString('latin1'))) return null;
    hash.update(part === null ? 'absent' : `${part.length}:`);
    if (part) hash.update(part);
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** `-c` pins for every driver the repository's config defines: none of them may run. */
async function driverPins(target: GitTarget): Promise<string[]> {
  const key = configKey(target.gitDir);
  const cached = key === null ? undefined : pinsCache.get(key);
  if (cached) return cached;
  const pins = await readDriverPins(target);
  if (key !== null) {
    pinsCache.set(key, pins);
    if (pinsCache.size > PINS_CACHE_SIZE) pinsCache.delete(pinsCache.keys().next().value!);
  }
  return pins;
}

async function readDriverPins(target: GitTarget): Promise<string[]> {
  const listed = await exec(
    ['config', '--name-only', '--get-regexp', '^(filter|diff|merge)\\.'],
    baseEnv({ gitDir: target.gitDir }),
  );
  // 1: no such key. Anything else (git killed, out of memory, a config it cannot parse) tells
  // nothing of the drivers, and an empty answer cached under these bytes would leave every
  // repository with the same config unpinned.
  if (listed.code !== 0 && listed.code !== 1) {
    throw new GitError(['config', '--get-regexp'], listed.code, listed.stderr);
  }
  const pins = new Set<string>();
  for (const key of listed.stdout.split('\n').filter(Boolean)) {
    const match = /^(filter|diff|merge)\.(.+)\.[^.]+$/.exec(key);
    if (!match) continue;
    const [, kind, driver] = match;
    if (kind === 'filter')
      for (const part of ['clean', 'smudge', 'process']) pins.add(`filter.${driver}.${part}=`);
    if (kind === 'filter') pins.add(`filter.${driver}.required=false`);
    if (kind === 'diff') for (const part of ['command', 'textconv']) pins.add(`diff.${driver}.${part}=`);
    if (kind === 'merge') pins.add(`merge.${driver}.driver=`);
  }
  return [...pins];
}

/** The git directories of the repository that holds `dir` (the user's own checkout: discovery is safe there). */
export async function discoverRepository(
  dir: string,
): Promise<{ gitDir: string; commonDir: string; topLevel: string }> {
  const env = { ...baseEnv({ gitDir: '' }) };
  delete env.GIT_DIR;
  const result = await exec(
    [
      '-c',
      'safe.directory=*',
      '-c',
      'core.fsmonitor=false',
      'rev-parse',
      '--absolute-git-dir',
      '--git-common-dir',
      '--show-toplevel',
    ],
    env,
    { cwd: dir },
  );
  if (result.code !== 0) throw new GitError(['rev-parse'], result.code, result.stderr);
  const [gitDir, common, topLevel] = result.stdout.trim().split('\n');
  // rev-parse may print the common dir relative to the folder it ran in.
  return { gitDir: path.resolve(dir, gitDir!), commonDir: path.resolve(dir, common!), topLevel: topLevel! };
}

/**
 * The identity the user's own commits carry (`user.name`, `user.email` from the repository's and
 * the user's global configuration), for the commit `aca apply` makes on their branch; aca's own
 * when none is set. Only reads configuration files: `git config --get` runs nothing.
 */
export async function readUserIdentity(target: GitTarget): Promise<{ name: string; email: string }> {
  const env: NodeJS.ProcessEnv = { ...baseEnv({ gitDir: target.gitDir }), HOME: os.homedir() };
  delete env.GIT_CONFIG_GLOBAL;
  const read = async (key: string) => (await exec(['config', '--get', key], env)).stdout.trim();
  const [name, email] = await Promise.all([read('user.name'), read('user.email')]);
  return name && email ? { name, email } : ACA_AUTHOR;
}

/**
 * A setting of the repository's own config file as the user's git reads it (no pins: aca's own
 * calls pin some of these off), or null when unset. `git config --get` runs nothing.
 */
export async function readRepoConfig(target: GitTarget, key: string): Promise<string | null> {
  const result = await exec(['config', '--get', key], baseEnv({ gitDir: target.gitDir }));
  return result.code === 0 ? result.stdout.replace(/\n$/, '') : null;
}

export interface GitCallOptions {
  author?: { name: string; email: string };
  allowExitCodes?: number[];
  /** Only for calls to the git store: see GitNetworkAccess. */
  network?: GitNetworkAccess;
  /** Written to git's stdin (e.g. pathspecs with `--pathspec-from-file=-`). */
  input?: Buffer;
}

/** Runs git on `target` with its configuration pinned; a GitError when it exits non-zero. */
export async function git(target: GitTarget, args: string[], options: GitCallOptions = {}): Promise<string> {
  return (await gitWithStatus(target, args, options)).stdout;
}

/** Like git(), but also gives stderr: what a push or fetch says about each ref is there. */
export async function gitWithStatus(
  target: GitTarget,
  args: string[],
  options: GitCallOptions = {},
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const author = options.author ?? ACA_AUTHOR;
  // The network settings come last: `-c` given later wins, and only they open a protocol.
  const pins = [...PINNED_CONFIG, ...(await driverPins(target)), ...(options.network?.config ?? [])];
  const env = {
    ...baseEnv(target),
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: author.name,
    GIT_COMMITTER_EMAIL: author.email,
    ...(options.network?.env ?? {}),
  };
  const full = [...pins.flatMap((pin) => ['-c', pin]), ...args];
  const result = await exec(full, env, {
    timeoutMs: options.network?.timeoutMs ?? 0,
    ...(options.input ? { input: options.input } : {}),
  });
  if (result.timedOut) throw new GitError(args, null, result.stderr, true);
  if (result.code !== 0 && !(options.allowExitCodes ?? []).includes(result.code ?? -1)) {
    throw new GitError(args, result.code, result.stderr);
  }
  return result;
}

/** Like git(), for output that may not be text (a blob): stdout as bytes. */
export async function gitBytes(target: GitTarget, args: string[], input?: Buffer): Promise<Buffer> {
  const pins = [...PINNED_CONFIG, ...(await driverPins(target))];
  const env = { ...baseEnv(target) };
  const full = [...pins.flatMap((pin) => ['-c', pin]), ...args];
  const result = await execBytes(full, env, input ? { input } : {});
  if (result.code !== 0) throw new GitError(args, result.code, result.stderr.toString('utf8'));
  return result.stdout;
}

/**
 * Like gitBytes(), but git is killed once it has printed more than `maxBytes`: the start of a
 * blob that may be of any size, of which no more than that and one read of the pipe is held.
 */
export async function gitBytesStart(target: GitTarget, args: string[], maxBytes: number): Promise<Buffer> {
  const pins = [...PINNED_CONFIG, ...(await driverPins(target))];
  const full = [...pins.flatMap((pin) => ['-c', pin]), ...args];
  // The chunk that passes the bound is dropped whole: the room past it holds the largest chunk.
  const result = await execBytes(full, { ...baseEnv(target) }, { keepStart: maxBytes + PIPE_CHUNK_ROOM });
  if (result.code !== 0) throw new GitError(args, result.code, result.stderr.toString('utf8'));
  return result.stdout.subarray(0, maxBytes);
}
