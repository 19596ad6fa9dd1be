/**
 * A user's repository and runs made in it the way the worker makes them (createRunWorktree, then
 * commitAll), for the tests of diff, apply and discard. Real git, temp folders, no Temporal.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { commitAll, createRunWorktree, type RunWorktree } from '../../src/repo';
import type { RunPlace } from '../../src/shared/run-types';

/** git as the user runs it in their own repository: their config, hooks and filters apply. */
export function userGit(repo: string, ...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: os.tmpdir(),
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'User',
      GIT_AUTHOR_EMAIL: 'user@example.com',
      GIT_COMMITTER_NAME: 'User',
      GIT_COMMITTER_EMAIL: 'user@example.com',
    },
  });
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
}

/** A repository on branch main with one commit holding `files`. */
export function makeUserRepo(dir: string, files: Record<string, string>): string {
  fs.mkdirSync(dir, { recursive: true });
  userGit(dir, 'init', '-q', '-b', 'main');
  writeFiles(dir, files);
  userGit(dir, 'add', '.');
  userGit(dir, 'commit', '-q', '-m', 'base');
  return dir;
}

export function commitAsUser(repo: string, files: Record<string, string>, message = 'user change'): string {
  writeFiles(repo, files);
  userGit(repo, 'add', '.');
  userGit(repo, 'commit', '-q', '-m', message);
  return userGit(repo, 'rev-parse', 'HEAD').trim();
}

export interface MadeRun {
  worktree: RunWorktree;
  /** What a run's snapshot carries in `place`. */
  place: RunPlace;
  base: string;
  head: string;
}

/** A run from the repository's HEAD that writes `files` (null deletes) and commits, as an attempt does. */
export async function makeRun(
  repo: string,
  workTree: string,
  branch: string,
  files: Record<string, string | null>,
): Promise<MadeRun> {
  const worktree = await createRunWorktree({ repoDir: repo, workTree, branch, base: 'HEAD' });
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(workTree, name);
    if (content === null) fs.rmSync(file);
    else writeFiles(workTree, { [name]: content });
  }
  const head = (await commitAll(worktree, 'aca: attempt 1, coder: change')) ?? worktree.baseCommit;
  return {
    worktree,
    place: {
      workflowId: branch.replace(/^aca\//, ''),
      branch,
      disk: 'test-disk',
      gitDir: worktree.gitDir,
      commonDir: worktree.commonDir,
      workTree,
    },
    base: worktree.baseCommit,
    head,
  };
}

function hashFile(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function walk(
  dir: string,
  relative: string,
  skip: (relative: string) => boolean,
  into: Record<string, string>,
): void {
  for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
    const name = relative ? `${relative}/${entry.name}` : entry.name;
    if (skip(name)) continue;
    if (entry.isDirectory()) walk(dir, name, skip, into);
    else if (entry.isSymbolicLink()) into[name] = `link:${fs.readlinkSync(path.join(dir, name))}`;
    else into[name] = hashFile(path.join(dir, name));
  }
}

/**
 * Every file of the working tree (untracked and ignored ones too) by content hash, plus HEAD,
 * ORIG_HEAD, the refs, their logs and the index of the git directory: equal before and after
 * means untouched.
 */
export function fingerprint(repo: string): Record<string, string> {
  const found: Record<string, string> = {};
  walk(repo, '', (name) => name === '.git', found);
  const gitDir = path.join(repo, '.git');
  for (const file of ['HEAD', 'index', 'packed-refs', 'ORIG_HEAD']) {
    if (fs.existsSync(path.join(gitDir, file))) found[`.git/${file}`] = hashFile(path.join(gitDir, file));
  }
  for (const folder of ['refs', 'logs']) {
    const inside: Record<string, string> = {};
    if (fs.existsSync(path.join(gitDir, folder))) walk(path.join(gitDir, folder), '', () => false, inside);
    for (const [name, hash] of Object.entries(inside)) found[`.git/${folder}/${name}`] = hash;
  }
  return found;
}
