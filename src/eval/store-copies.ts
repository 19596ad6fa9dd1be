/**
 * A batch's repositories between hosts that share no folder: the host that starts the batch pushes
 * the base commits of each of its repository copies to the git store (ACA_GIT_STORE), under
 * `refs/aca-eval/<copy>/base/*`; a host that prepares an instance's run or evaluates an instance
 * and lacks the copy makes its own from there, under its own ACA_HOME. Only base commits and their
 * history travel, as in the copy itself (repositories.ts): never an instance's fix.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeCopyOnce } from './copy-once';
import { callStore, ensureGitStore, git, type GitStoreLocation } from '../repo';
import type { RepoInput } from '../shared/run-types';

/** What evalRepositoryCopy names a copy: the repository's folder name and a hash of its source. */
const COPY_NAME = /^\w[\w.-]*-[0-9a-f]{12}$/;

function storeRefs(copyKey: string): string {
  return `refs/aca-eval/${copyKey}/base`;
}

/** Pushes the base commits of aca's copy at `copyPath` to the store (again: nothing new to send). */
export async function publishCopy(store: GitStoreLocation, copyPath: string): Promise<void> {
  await ensureGitStore(store);
  const key = path.basename(copyPath);
  await callStore(store, 'push', path.join(copyPath, '.git'), {}, [
    'push',
    '--quiet',
    '--no-verify',
    '--',
    store.url,
    `+refs/aca-eval/base/*:${storeRefs(key)}/*`,
  ]);
}

/**
 * This host's copy of the repository `copyPath` names, holding `commits`: `copyPath` itself when
 * it is here with them (one host, or a shared folder), else `<home>/eval/repos/<copy>` made or
 * completed from the store.
 */
export async function copyOnThisHost(
  copyPath: string,
  commits: string[],
  home: string,
  store: GitStoreLocation | null,
): Promise<string> {
  if (await hasCommits(copyPath, commits)) return copyPath;
  if (!store) return copyPath;
  const key = path.basename(copyPath);
  // Names a folder under this host's eval/repos and refs in the store: only a copy's name will do.
  if (!COPY_NAME.test(key)) throw new Error(`${copyPath} does not name a repository copy of aca eval`);
  const root = path.join(home, 'eval', 'repos');
  const dest = path.join(root, key);
  if (await hasCommits(dest, commits)) return dest;
  fs.mkdirSync(root, { recursive: true });
  await makeCopyOnce(dest, store.display, (gitDir) => fetchBases(store, gitDir, key));
  if (!(await hasCommits(dest, commits))) await fetchBases(store, path.join(dest, '.git'), key);
  if (!(await hasCommits(dest, commits))) {
    throw new Error(`the git store ${store.display} lacks base commits of ${key}: ${commits.join(', ')}`);
  }
  return dest;
}

/**
 * The repository an `aca eval` run is prepared in (`RepoInput.evalCopy`): this host's copy of the
 * one the batch names, as its evaluation finds it. Any other run's repository is the user's own.
 */
export async function runRepositoryHere(
  repo: RepoInput | null,
  home: string | undefined,
  store: GitStoreLocation | null,
): Promise<RepoInput | null> {
  if (!repo?.evalCopy) return repo;
  const here = await copyOnThisHost(repo.path, [repo.baseCommit], home ?? '', home ? store : null);
  return { ...repo, path: here };
}

async function fetchBases(store: GitStoreLocation, gitDir: string, key: string): Promise<void> {
  await callStore(store, 'fetch', gitDir, {}, [
    'fetch',
    '--quiet',
    '--no-tags',
    '--no-write-fetch-head',
    '--no-recurse-submodules',
    '--upload-pack=git-upload-pack',
    '--',
    store.url,
    `+${storeRefs(key)}/*:refs/aca-eval/base/*`,
  ]);
}

async function hasCommits(copyPath: string, commits: string[]): Promise<boolean> {
  const gitDir = path.join(copyPath, '.git');
  if (!fs.existsSync(gitDir)) return false;
  for (const commit of new Set(commits)) {
    const found = await git(
      { gitDir },
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${commit}^{commit}`],
      { allowExitCodes: [1, 128] },
    );
    if (!found.trim()) return false;
  }
  return true;
}
