/**
 * Making a run's repository (src/repo/worktree/make-run-repository.ts): what it refuses before
 * making anything, the retry that finds its own first try, and `.aca.json` read from the base
 * commit rather than from the work tree.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeRunRepository } from '../../../../src/repo';
import { UserInputError } from '../../../../src/shared/errors';
import { tempDirs } from '../../../helpers/temp-dirs';

const tempDir = tempDirs('aca-make-run-repo-');

function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();
}

function userRepo(files: Record<string, string>): { path: string; baseCommit: string } {
  const dir = tempDir();
  sh(dir, 'init', '--quiet', '--initial-branch=main');
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  sh(dir, 'add', '-A');
  sh(dir, 'commit', '--quiet', '-m', 'first');
  return { path: dir, baseCommit: sh(dir, 'rev-parse', 'HEAD') };
}

const branches = (repo: string) => sh(repo, 'branch', '--format=%(refname:short)').split('\n').sort();

describe('makeRunRepository', () => {
  test('a workspace inside the repository is refused, and nothing is made', async () => {
    const repo = userRepo({ 'a.py': 'x = 1\n' });
    const workspace = path.join(repo.path, 'ws');
    const made = makeRunRepository({
      workflowId: 'inside',
      disk: 'test-disk',
      workspace,
      repo,
      gitDir: null,
    });
    await expect(made).rejects.toThrow(UserInputError);
    await expect(made).rejects.toThrow(`the run's workspace ${workspace} lies inside the repository`);
    expect(fs.existsSync(workspace)).toBe(false);
    expect(branches(repo.path)).toEqual(['main']);
  });

  test('a workspace that already holds files is refused and left as it was', async () => {
    const repo = userRepo({ 'a.py': 'x = 1\n' });
    const workspace = tempDir();
    fs.writeFileSync(path.join(workspace, 'mine.txt'), 'keep\n');
    await expect(
      makeRunRepository({ workflowId: 'full', disk: 'test-disk', workspace, repo, gitDir: null }),
    ).rejects.toThrow(`the run's worktree path ${workspace} already holds files`);
    expect(fs.readdirSync(workspace)).toEqual(['mine.txt']);
    expect(branches(repo.path)).toEqual(['main']);
  });

  test("a retry finds its own first try's worktree and makes it again", async () => {
    const repo = userRepo({ 'a.py': 'x = 1\n', '.aca.json': '{ "testCommand": "make check" }\n' });
    const workspace = path.join(tempDir(), 'ws');
    const first = await makeRunRepository({
      workflowId: 'again',
      disk: 'test-disk',
      workspace,
      repo,
      gitDir: null,
    });
    // The work tree's copy is not what counts: .aca.json is read from the base commit.
    fs.writeFileSync(path.join(workspace, '.aca.json'), '{ "testCommand": "rm -rf /" }\n');
    const second = await makeRunRepository({
      workflowId: 'again',
      disk: 'test-disk',
      workspace,
      repo,
      gitDir: null,
    });
    expect(second.place).toEqual(first.place);
    expect(second.place.branch).toBe('aca/again');
    expect(second).toMatchObject({
      baseCommit: repo.baseCommit,
      startCommit: repo.baseCommit,
    });
    expect(second.config.testCommand).toBe('make check');
    expect(fs.readFileSync(path.join(workspace, '.aca.json'), 'utf8')).toBe(
      '{ "testCommand": "make check" }\n',
    );
    expect(branches(repo.path)).toEqual(['aca/again', 'main']);
  });

  test("a branch of the run's name already in the repository is refused", async () => {
    const repo = userRepo({ 'a.py': 'x = 1\n' });
    sh(repo.path, 'branch', 'aca/taken');
    await expect(
      makeRunRepository({
        workflowId: 'taken',
        disk: 'test-disk',
        workspace: path.join(tempDir(), 'ws'),
        repo,
        gitDir: null,
      }),
    ).rejects.toThrow(`branch aca/taken already exists in ${repo.path}`);
  });

  test('a run without --repo and without a git directory of its own is refused', async () => {
    await expect(
      makeRunRepository({
        workflowId: 'bare',
        disk: 'test-disk',
        workspace: path.join(tempDir(), 'ws'),
        repo: null,
        gitDir: null,
      }),
    ).rejects.toThrow(UserInputError);
  });
});
