/**
 * Worktree changes of one repository take turns across processes: workers sharing an ACA_HOME
 * (or working on one `--repo` repository) add and remove worktrees of it at once, and `git
 * worktree add` fails on an entry another add is still writing, or one a prune removed under it.
 * Each child process also holds the lock for a change of its own with a marker file made
 * exclusively, so two holders at one moment are seen even when git happens not to fail. A process
 * killed while it holds the lock leaves nothing that stops the next one.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRunWorktree, removeRunWorktree } from '../../../../src/repo';
import { rawGit } from '../../../helpers/raw-git';
import { tempDirs } from '../../../helpers/temp-dirs';

const tempDir = tempDirs('aca-worktree-lock-');
const PROJECT = path.resolve(__dirname, '..', '..', '..');
const CHILD = path.join(__dirname, 'worktree-lock-child.ts');

type ChildMessage = { failures: string[] } | { holding: true } | { error: string };

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function repository(): string {
  const repo = path.join(tempDir(), 'repo');
  fs.mkdirSync(repo);
  rawGit(path.join(repo, '.git'), repo, 'init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(path.join(repo, 'a.txt'), 'a\n');
  rawGit(path.join(repo, '.git'), repo, 'add', 'a.txt');
  rawGit(path.join(repo, '.git'), repo, 'commit', '--quiet', '-m', 'base');
  return repo;
}

/** A process of its own running worktree-lock-child.ts; its first message. */
function child(args: string[]): { process: ChildProcess; message: Promise<ChildMessage> } {
  const proc = fork(CHILD, args, {
    cwd: PROJECT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(proc);
  const message = new Promise<ChildMessage>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as ChildMessage));
    proc.once('exit', (code, signal) =>
      reject(new Error(`child ended (${code ?? signal}) before saying anything`)),
    );
  });
  return { process: proc, message };
}

test('processes adding and removing worktrees of one repository at once all succeed, many times over', async () => {
  const repo = repository();
  const root = tempDir();
  const processes = 3;
  const each = 20;
  const runs = Array.from({ length: processes }, (_, i) =>
    child(['churn', repo, root, `p${i}`, String(each)]),
  );
  const results = await Promise.all(runs.map((run) => run.message));
  expect(results).toEqual(Array.from({ length: processes }, () => ({ failures: [] })));
  // Every worktree came and went: only the main one is left, and no branch of theirs.
  expect(
    rawGit(path.join(repo, '.git'), null, 'worktree', 'list', '--porcelain').match(/^worktree /gm),
  ).toHaveLength(1);
  expect(rawGit(path.join(repo, '.git'), null, 'branch', '--list', 'aca/*')).toBe('');
});

test('an add waits while another process holds the lock, and goes on once that process is killed', async () => {
  const repo = repository();
  const holder = child(['hold', repo]);
  expect(await holder.message).toEqual({ holding: true });
  let killed = false;
  const adding = createRunWorktree({
    repoDir: repo,
    workTree: path.join(tempDir(), 'wt'),
    branch: 'aca/after-holder',
    base: 'HEAD',
  }).then((worktree) => ({ worktree, afterKill: killed }));
  // Long enough for an unguarded add to have ended several times over.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const exited = new Promise((resolve) => holder.process.once('exit', resolve));
  killed = true;
  holder.process.kill('SIGKILL');
  await exited;
  const { worktree, afterKill } = await adding;
  expect(afterKill).toBe(true);
  // The lock is the git directory itself: nothing of the lock's is left in the repository.
  expect(fs.readdirSync(path.join(repo, '.git')).filter((name) => /lock/.test(name))).toEqual([]);
  await removeRunWorktree(worktree);
  const again = await createRunWorktree({
    repoDir: repo,
    workTree: path.join(tempDir(), 'wt-again'),
    branch: 'aca/again',
    base: 'HEAD',
  });
  await removeRunWorktree(again);
});
