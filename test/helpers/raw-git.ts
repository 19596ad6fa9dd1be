import { execFileSync } from 'node:child_process';

/**
 * git as a test runs it, trusted and apart from aca's own git calls: no system or global config,
 * an explicit git directory (and work tree), a fixed identity of someone other than aca.
 */
export function rawGit(gitDir: string, workTree: string | null, ...args: string[]): string {
  return execFileSync('git', args, {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: {
      PATH: process.env.PATH,
      HOME: '/nonexistent',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_DIR: gitDir,
      ...(workTree ? { GIT_WORK_TREE: workTree } : {}),
      GIT_AUTHOR_NAME: 'Other',
      GIT_AUTHOR_EMAIL: 'other@example.com',
      GIT_COMMITTER_NAME: 'Other',
      GIT_COMMITTER_EMAIL: 'other@example.com',
    },
  });
}
