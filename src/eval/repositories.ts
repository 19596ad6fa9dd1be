import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeCopyOnce } from './copy-once';
import { git, GitError } from '../repo';
import { UserInputError } from '../shared/errors';

/** Where an instance's repository is in `--repos DIR`: `<owner>__<name>` (a git repository) or its `.bundle`. */
export interface RepoSource {
  repo: string;
  path: string;
  kind: 'repository' | 'bundle';
}

export function repoFolderName(repo: string): string {
  return repo.replace('/', '__');
}

/** Finds `repo` in `--repos DIR`; a UserInputError when it is not there. */
export function findRepoSource(reposDir: string, repo: string): RepoSource {
  const base = path.join(path.resolve(reposDir), repoFolderName(repo));
  if (fs.existsSync(base) && fs.statSync(base).isDirectory()) {
    const dotGit = path.join(base, '.git');
    const bare = fs.existsSync(path.join(base, 'HEAD')) && fs.existsSync(path.join(base, 'objects'));
    if (fs.existsSync(dotGit) || bare) return { repo, path: base, kind: 'repository' };
    throw new UserInputError(`${base} (repository ${repo}) is not a git repository`);
  }
  const bundle = `${base}.bundle`;
  if (fs.existsSync(bundle) && fs.statSync(bundle).isFile()) return { repo, path: bundle, kind: 'bundle' };
  throw new UserInputError(
    `repository ${repo} is not in ${path.resolve(reposDir)}: expected ${path.basename(base)} (a git repository) or ${path.basename(bundle)}`,
  );
}

/**
 * aca's own copy of a source repository under `<home>/eval/repos`, made once per source and
 * reused: every run's worktree and branch, and every evaluation tree, comes from it, so the
 * user's repository or bundle is only read. The copy holds the base commits and their history
 * only, never a later commit (the fix itself is one): a copy lacking some of `commits` fetches
 * those. Returns the copy's top-level folder (a repository with nothing checked out).
 */
export async function evalRepositoryCopy(
  home: string,
  source: RepoSource,
  commits: string[],
): Promise<string> {
  const real = fs.realpathSync(source.path);
  const key = `${repoFolderName(source.repo)}-${createHash('sha256').update(real).digest('hex').slice(0, 12)}`;
  const root = path.join(home, 'eval', 'repos');
  const dest = path.join(root, key);
  fs.mkdirSync(root, { recursive: true });
  await makeCopyOnce(dest, real, (gitDir) => fetchBases(root, gitDir, real, commits));
  const gitDir = path.join(dest, '.git');
  let missing = await missingCommits(gitDir, commits);
  if (missing.length > 0) {
    await fetchBases(root, gitDir, real, missing);
    missing = await missingCommits(gitDir, commits);
  }
  if (missing.length > 0) {
    throw new UserInputError(
      `${source.path} (repository ${source.repo}) lacks base commit${missing.length > 1 ? 's' : ''} ${missing.slice(0, 5).join(', ')}`,
    );
  }
  return dest;
}

/**
 * Brings `commits` and their history into the copy, nothing else: the source is fetched whole
 * into a staging repository, each commit found there gets a ref, and the copy fetches those refs.
 */
async function fetchBases(root: string, gitDir: string, source: string, commits: string[]): Promise<void> {
  const staging = fs.mkdtempSync(path.join(root, '.staging-'));
  try {
    const stagingGit = path.join(staging, '.git');
    await git({ gitDir: stagingGit }, ['init', '--quiet', staging]);
    await fetchSource(stagingGit, source);
    let found = 0;
    for (const commit of new Set(commits)) {
      const full = (
        await git(
          { gitDir: stagingGit },
          ['rev-parse', '--verify', '--quiet', '--end-of-options', `${commit}^{commit}`],
          { allowExitCodes: [1, 128] },
        )
      ).trim();
      if (!/^[0-9a-f]{40,64}$/.test(full)) continue;
      await git({ gitDir: stagingGit }, ['update-ref', `refs/base/${full}`, full]);
      found += 1;
    }
    if (found === 0) return;
    await git({ gitDir }, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--end-of-options',
      stagingGit,
      '+refs/base/*:refs/aca-eval/base/*',
    ]);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
async function fetchSource(gitDir: string, source: string): Promise<void> {
  try {
    await git({ gitDir }, [
      'fetch',
      '--quiet',
      '--no-tags',
      '--end-of-options',
      source,
      '+refs/heads/*:refs/source/heads/*',
      '+refs/tags/*:refs/source/tags/*',
      '+refs/remotes/*:refs/source/remotes/*',
    ]);
  } catch (err) {
    if (err instanceof GitError) {
      throw new UserInputError(
        `cannot read the repository ${source}: ${err.stderr.trim().split('\n').pop() ?? ''}`,
      );
    }
    throw err;
  }
}

async function missingCommits(gitDir: string, commits: string[]): Promise<string[]> {
  const unique = [...new Set(commits)];
  if (unique.length === 0) return [];
  const missing: string[] = [];
  for (const commit of unique) {
    const found = await git(
      { gitDir },
      ['rev-parse', '--verify', '--quiet', '--end-of-options', `${commit}^{commit}`],
      {
        allowExitCodes: [1, 128],
      },
    );
    if (!found.trim().startsWith(commit)) missing.push(commit);
  }
  return missing;
}
