/**
 * `aca diff` and `aca discard` in src/repo, on runs made as the worker makes them: a worktree of
 * the user's repository, or (without --repo) a repository of the run's own.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { diffRun, discardRun, createFreshRunRepository, commitAll } from '../../../../src/repo';
import { UserInputError } from '../../../../src/shared/errors';
import {
  fingerprint,
  makeRun,
  makeUserRepo,
  userGit,
  writeFiles,
  type MadeRun,
} from '../../../helpers/run-fixture';

describe('diff and discard of a run', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-review-'));
  let counter = 0;
  let repo: string;
  let made: MadeRun;

  beforeEach(async () => {
    counter += 1;
    repo = makeUserRepo(path.join(root, `repo-${counter}`), {
      'calc.py': 'def add(a, b):\n    return a - b\n',
      'old.txt': 'to be removed\n',
    });
    userGit(repo, 'branch', 'other');
    made = await makeRun(repo, path.join(root, `ws-${counter}`), `aca/run-${counter}`, {
      'calc.py': 'def add(a, b):\n    return a + b\n',
      'lib/new.py': 'x = 1\ny = 2\n',
      'old.txt': null,
    });
  });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test("the diff is the run's changes against its base, as a unified diff", async () => {
    const diff = await diffRun(made.place, made.base, made.head);
    expect(diff).toContain('diff --git a/calc.py b/calc.py');
    expect(diff).toContain('-    return a - b\n+    return a + b\n');
    expect(diff).toContain('+++ b/lib/new.py');
    expect(diff).toContain('deleted file mode');
    // A patch the user can take by hand.
    fs.writeFileSync(path.join(root, `patch-${counter}`), diff);
    userGit(repo, 'apply', '--check', path.join(root, `patch-${counter}`));
  });

  test('--stat: one line per file with its counts, then a total', async () => {
    const stat = await diffRun(made.place, made.base, made.head, { stat: true });
    const lines = stat.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^ calc\.py\s+\| 2 \+-$/);
    expect(lines[1]).toMatch(/^ lib\/new\.py\s+\| 2 \+\+$/);
    expect(lines[2]).toMatch(/^ old\.txt\s+\| 1 -$/);
    expect(lines[3]).toBe(' 3 files changed, 3 insertions(+), 2 deletions(-)');
  });

  test('a run without changes has an empty diff; a commit that is gone is a clear error', async () => {
    expect(await diffRun(made.place, made.base, made.base)).toBe('');
    await expect(diffRun(made.place, made.base, 'f'.repeat(40))).rejects.toThrow(UserInputError);
  });

  test('discard removes the worktree and branch and leaves the checkout and other branches', async () => {
    writeFiles(repo, { 'notes.txt': 'mine\n' });
    const refs = () => userGit(repo, 'for-each-ref', '--format=%(refname) %(objectname)');
    const refsBefore = refs();
    // Files, HEAD, index; the refs are compared through git (deleting one may rewrite packed-refs).
    const ofCheckout = (print: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(print).filter(([name]) => !/^\.git\/(refs|logs|packed-refs)/.test(name)),
      );
    const before = ofCheckout(fingerprint(repo));

    expect(await discardRun({ place: made.place, repo })).toEqual({
      workTree: made.place.workTree,
      branch: made.worktree.branch,
      gitDir: null,
    });

    expect(fs.existsSync(made.place.workTree)).toBe(false);
    expect(fs.existsSync(made.place.gitDir)).toBe(false);
    expect(userGit(repo, 'branch', '--format=%(refname:short)')).toBe('main\nother\n');
    expect(refs()).toBe(
      refsBefore
        .split('\n')
        .filter((line) => !line.startsWith(`refs/heads/${made.worktree.branch} `))
        .join('\n'),
    );
    expect(userGit(repo, 'worktree', 'list', '--porcelain')).not.toContain(made.place.workTree);
    expect(ofCheckout(fingerprint(repo))).toEqual(before);

    // Twice is harmless: nothing is left to remove.
    expect(await discardRun({ place: made.place, repo })).toEqual({
      workTree: null,
      branch: null,
      gitDir: null,
    });
  });

  test('discard works when code under test wrecked the .git file of the worktree', async () => {
    fs.rmSync(path.join(made.place.workTree, '.git'));
    fs.mkdirSync(path.join(made.place.workTree, '.git'));
    await discardRun({ place: made.place, repo });
    expect(fs.existsSync(made.place.workTree)).toBe(false);
    expect(userGit(repo, 'branch', '--format=%(refname:short)')).toBe('main\nother\n');
  });

  test('discard refuses a branch the user has checked out, and branches aca did not make', async () => {
    const elsewhere = path.join(root, `elsewhere-${counter}`);
    // The run's worktree goes; the user checks its branch out in a worktree of their own.
    userGit(repo, 'worktree', 'remove', '--force', made.place.workTree);
    userGit(repo, 'worktree', 'add', '-q', elsewhere, made.worktree.branch);
    await expect(discardRun({ place: made.place, repo })).rejects.toThrow(/is checked out in .*elsewhere/);
    expect(fs.existsSync(elsewhere)).toBe(true);

    await expect(discardRun({ place: { ...made.place, branch: 'other' }, repo })).rejects.toThrow(
      /not a branch aca made/,
    );
    expect(userGit(repo, 'branch', '--format=%(refname:short)')).toContain('other');
  });

  test("the user's main checkout is never removed, whatever the snapshot says", async () => {
    userGit(repo, 'worktree', 'remove', '--force', made.place.workTree);
    const result = await discardRun({
      place: { ...made.place, workTree: repo },
      repo,
    });
    expect(result.workTree).toBeNull();
    expect(fs.existsSync(path.join(repo, 'calc.py'))).toBe(true);
  });

  test('a run without --repo: its workspace and its own git directory go', async () => {
    const gitDir = path.join(root, `gitdirs-${counter}`, 'run.git');
    const workTree = path.join(root, `own-${counter}`);
    const own = await createFreshRunRepository({ gitDir, workTree, branch: `aca/own-${counter}` });
    writeFiles(workTree, { 'main.py': 'print(1)\n' });
    const head = await commitAll(own, 'aca: attempt 1');
    expect(await diffRun(own, own.baseCommit, head!, { stat: true })).toMatch(/main\.py\s+\| 1 \+/);

    expect(await discardRun({ place: { ...own, branch: `aca/own-${counter}` }, repo: null })).toEqual({
      workTree,
      branch: null,
      gitDir,
    });
    expect(fs.existsSync(workTree)).toBe(false);
    expect(fs.existsSync(gitDir)).toBe(false);
  });

  test('a run without --repo whose paths are not its own is refused', async () => {
    const home = os.homedir();
    await expect(
      discardRun({
        place: { ...made.place, gitDir: made.place.commonDir, workTree: home },
        repo: null,
      }),
    ).rejects.toThrow(/refusing to remove/);
    await expect(
      discardRun({
        place: made.place,
        repo: null,
      }),
    ).rejects.toThrow(/shared with/);
    expect(fs.existsSync(made.place.workTree)).toBe(true);
    expect(fs.existsSync(made.place.commonDir)).toBe(true);
  });
});
