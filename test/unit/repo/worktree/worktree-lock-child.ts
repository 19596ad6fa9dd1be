/**
 * Another worker process, for worktree-lock.test.ts: it adds and removes worktrees of a
 * repository (`churn`), or takes the repository's worktree lock and keeps it until killed (`hold`).
 * It reports to its parent over the IPC channel.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  discoverRepository,
  git,
  createRunWorktree,
  removeRunWorktree,
  withWorktreeLock,
} from '../../../../src/repo';

/**
 * Adds `count` worktrees, then removes them; between adds it holds the lock for a change of its
 * own (a prune) with `marker` made exclusively, so another holder at the same moment is seen.
 */
async function churn(repo: string, root: string, name: string, count: number): Promise<string[]> {
  const failures: string[] = [];
  const made = [];
  const { commonDir } = await discoverRepository(repo);
  const marker = path.join(root, 'held');
  for (let i = 0; i < count; i++) {
    try {
      made.push(
        await createRunWorktree({
          repoDir: repo,
          workTree: `${root}/${name}-${i}`,
          branch: `aca/${name}-${i}`,
          base: 'HEAD',
        }),
      );
      await withWorktreeLock(commonDir, async () => {
        try {
          fs.writeFileSync(marker, name, { flag: 'wx' });
        } catch {
          failures.push(`${name}-${i}: the lock was held by ${fs.readFileSync(marker, 'utf8')} too`);
          return;
        }
        await git({ gitDir: commonDir }, ['worktree', 'prune']);
        fs.rmSync(marker);
      });
    } catch (err) {
      failures.push(`add ${name}-${i}: ${String(err)}`);
    }
  }
  for (const worktree of made) {
    try {
      await removeRunWorktree(worktree);
    } catch (err) {
      failures.push(`remove ${worktree.branch}: ${String(err)}`);
    }
  }
  return failures;
}

async function main(): Promise<void> {
  const [mode, repo, root, name, count] = process.argv.slice(2);
  if (mode === 'churn') {
    process.send!({ failures: await churn(repo!, root!, name!, Number(count)) });
    process.disconnect();
    return;
  }
  const { commonDir } = await discoverRepository(repo!);
  await withWorktreeLock(commonDir, async () => {
    process.send!({ holding: true });
    // Held until this process is killed.
    await new Promise(() => setInterval(() => undefined, 60_000));
  });
}

main().catch((err: unknown) => {
  process.send?.({ error: String(err) });
  process.exitCode = 1;
});
