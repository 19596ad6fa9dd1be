/**
 * Files aca reads itself before it runs git, where a FIFO, a device or a huge file would block
 * the worker's event loop for good or read without end: the repository's config and its
 * worktrees' `commondir` and `config.worktree` (hashed for the driver pins' cache, git.ts), and
 * the `.git` file at the top of a run's work tree, which the code under test can replace.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  git,
  createRunWorktree,
  resetWorkTree,
  workTreeIsAt,
  type GitTarget,
  type RunWorktree,
} from '../../../../src/repo';
import { IrregularFileError } from '../../../../src/shared/regular-file';
import { unblockFifos, within } from '../../../helpers/fifo-guards';
import { rawGit } from '../../../helpers/raw-git';
import { tempDirs } from '../../../helpers/temp-dirs';

const tempDir = tempDirs('aca-irregular-git-');
const writers: ChildProcess[] = [];
const fifoDirs: string[] = [];

afterEach(() => {
  for (const writer of writers.splice(0)) writer.kill('SIGKILL');
  for (const dir of fifoDirs.splice(0)) unblockFifos(dir);
});

function repository(): { repo: string; target: GitTarget } {
  const repo = path.join(tempDir(), 'repo');
  fs.mkdirSync(repo);
  const gitDir = path.join(repo, '.git');
  rawGit(gitDir, repo, 'init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(path.join(repo, 'a.txt'), 'a\n');
  rawGit(gitDir, repo, 'add', 'a.txt');
  rawGit(gitDir, repo, 'commit', '--quiet', '-m', 'base');
  fifoDirs.push(gitDir);
  return { repo, target: { gitDir, workTree: repo } };
}

/**
 * Replaces `file` with a FIFO. A read that blocks on it (the worker's, synchronously) is let go
 * after a few seconds by a writer, so a failing test fails instead of hanging the suite; a git
 * process blocked on it is let go by unblockFifos after the test.
 */
function plantFifo(file: string): void {
  fs.rmSync(file, { force: true });
  execFileSync('mkfifo', [file]);
  writers.push(spawn('sh', ['-c', `sleep 5; : > '${file}'`], { stdio: 'ignore' }));
}

async function refusal(call: Promise<unknown>): Promise<unknown> {
  return within(
    20_000,
    'a git call on a planted file',
    call.then(
      () => 'no refusal',
      (err: unknown) => err,
    ),
  );
}

test("a FIFO as the repository's config is refused at once, before any git process waits on it", async () => {
  const { target } = repository();
  // A first call caches the pins for this config's bytes.
  await git(target, ['status', '--porcelain']);
  const config = path.join(target.gitDir, 'config');
  plantFifo(config);
  const err = await refusal(git(target, ['status', '--porcelain']));
  expect(err).toBeInstanceOf(IrregularFileError);
  expect(err).toMatchObject({ file: config, kind: 'fifo' });
});

test('a config linked to /dev/zero is refused; a linked regular config is read as git reads it', async () => {
  const { repo, target } = repository();
  const config = path.join(target.gitDir, 'config');
  const elsewhere = path.join(tempDir(), 'config');
  fs.renameSync(config, elsewhere);
  fs.symlinkSync(elsewhere, config);
  await git(target, ['status', '--porcelain']);
  // A filter the linked config gains afterwards is pinned off all the same.
  const marker = path.join(tempDir(), 'filter-ran');
  fs.appendFileSync(
    elsewhere,
    `[filter "late"]\n\tclean = sh -c 'touch ${marker}; cat'\n\trequired = true\n`,
  );
  fs.writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=late\n');
  fs.writeFileSync(path.join(repo, 'b.txt'), 'b\n');
  await git(target, ['add', '-A']);
  expect(fs.existsSync(marker)).toBe(false);

  fs.rmSync(config);
  fs.symlinkSync('/dev/zero', config);
  expect(await refusal(git(target, ['status', '--porcelain']))).toMatchObject({
    file: config,
    kind: 'character device',
  });
});

test('a config too large to hash is read by git on every call, its drivers pinned off', async () => {
  const { repo, target } = repository();
  const config = path.join(target.gitDir, 'config');
  await git(target, ['status', '--porcelain']);
  const marker = path.join(tempDir(), 'filter-ran');
  fs.appendFileSync(
    config,
    `${'# padding\n'.repeat(120_000)}[filter "big"]\n\tclean = sh -c 'touch ${marker}; cat'\n\trequired = true\n`,
  );
  expect(fs.statSync(config).size).toBeGreaterThan(1024 * 1024);
  fs.writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=big\n');
  fs.writeFileSync(path.join(repo, 'b.txt'), 'b\n');
  await git(target, ['add', '-A']);
  expect(fs.existsSync(marker)).toBe(false);
});

describe("a linked worktree's own files", () => {
  async function linked(): Promise<RunWorktree> {
    const { repo } = repository();
    return createRunWorktree({
      repoDir: repo,
      workTree: path.join(tempDir(), 'wt'),
      branch: 'aca/irregular',
      base: 'HEAD',
    });
  }

  test.each(['commondir', 'config.worktree'])('a FIFO as %s is refused at once', async (name) => {
    const worktree = await linked();
    const file = path.join(worktree.gitDir, name);
    plantFifo(file);
    fifoDirs.push(worktree.gitDir);
    expect(await refusal(git(worktree, ['status', '--porcelain']))).toMatchObject({
      file,
      kind: 'fifo',
    });
  });

  test("a huge file planted as the work tree's `.git` is found wrong and replaced, never read", async () => {
    const worktree = await linked();
    expect(await workTreeIsAt(worktree, worktree.branch, worktree.baseCommit, true)).toBe(true);
    const pointer = path.join(worktree.workTree, '.git');
    fs.rmSync(pointer);
    fs.closeSync(fs.openSync(pointer, 'w'));
    // Sparse: gigabytes to a reader, nothing on the disk.
    fs.truncateSync(pointer, 3 * 1024 ** 3);
    expect(await workTreeIsAt(worktree, worktree.branch, worktree.baseCommit, true)).toBe(false);
    await resetWorkTree(worktree, worktree.branch, worktree.baseCommit, {
      linked: true,
      removeIgnored: true,
    });
    expect(fs.readFileSync(pointer, 'utf8')).toBe(`gitdir: ${worktree.gitDir}\n`);
    expect(await workTreeIsAt(worktree, worktree.branch, worktree.baseCommit, true)).toBe(true);
  });

  test("a FIFO planted as the work tree's `.git` is found wrong without being opened", async () => {
    const worktree = await linked();
    plantFifo(path.join(worktree.workTree, '.git'));
    fifoDirs.push(worktree.workTree);
    expect(
      await within(
        20_000,
        'workTreeIsAt',
        workTreeIsAt(worktree, worktree.branch, worktree.baseCommit, true),
      ),
    ).toBe(false);
  });
});
