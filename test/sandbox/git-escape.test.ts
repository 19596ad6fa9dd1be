/**
 * Escape suite, git: model-written tests plant things in the run's worktree for the worker's next
 * git command (run on the host, often as root). Each test plants one, runs in the sandbox, and
 * then the worker commits and diffs the worktree as a run does: nothing planted may run, and the
 * commit must land on the run's branch of the user's repository.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  commitAll,
  createRunWorktree,
  diffCommits,
  removeRunWorktree,
  type RunWorktree,
} from '../../src/repo';
import { runTestSuite } from '../../src/sandbox';

const MARK = path.join(os.tmpdir(), `aca-git-escape-${randomBytes(6).toString('hex')}`);
const marker = (vector: string): string => `${MARK}-${vector}`;
const py = (s: string): string => JSON.stringify(s);

/** git as the user runs it in their own repository (their config and hooks apply). */
function userGit(repo: string, ...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'u',
      GIT_AUTHOR_EMAIL: 'u@x',
      GIT_COMMITTER_NAME: 'u',
      GIT_COMMITTER_EMAIL: 'u@x',
    },
  });
}

describe('git on a hostile worktree', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-git-escape-'));
  let repo: string;
  let worktree: RunWorktree;
  let counter = 0;

  beforeEach(async () => {
    counter += 1;
    repo = path.join(root, `repo-${counter}`);
    fs.mkdirSync(repo);
    userGit(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'calc.py'), 'def add(a, b):\n    return a - b\n');
    userGit(repo, 'add', '.');
    userGit(repo, 'commit', '-q', '-m', 'base');
    // The user's own hook and drivers: fine for them, never to be run on model-written code.
    fs.writeFileSync(
      path.join(repo, '.git', 'hooks', 'pre-commit'),
      `#!/bin/sh\ntouch ${marker('user-hook')}\n`,
      { mode: 0o755 },
    );
    userGit(repo, 'config', 'filter.userfilter.clean', `sh -c 'touch ${marker('filter')}; cat'`);
    userGit(repo, 'config', 'diff.userdiff.command', `sh -c 'touch ${marker('diff-driver')}'`);
    userGit(repo, 'config', 'diff.usertext.textconv', `sh -c 'touch ${marker('textconv')}; cat "$1"' --`);
    worktree = await createRunWorktree({
      repoDir: repo,
      workTree: path.join(root, `ws-${counter}`),
      branch: `aca/run-${counter}`,
      base: 'HEAD',
    });
  });

  afterAll(() => {
    fs.rmSync(root, { recursive: true, force: true });
    for (const file of fs.readdirSync(os.tmpdir())) {
      if (file.startsWith(path.basename(MARK))) fs.rmSync(path.join(os.tmpdir(), file), { force: true });
    }
  });

  /** Runs `plant` as a pytest test in the sandbox, then commits and diffs as the worker does. */
  async function plantThenCommit(plant: string): Promise<string | null> {
    fs.writeFileSync(path.join(worktree.workTree, 'calc.py'), 'def add(a, b):\n    return a + b\n');
    fs.writeFileSync(
      path.join(worktree.workTree, 'test_plant.py'),
      `import os, subprocess, pathlib\n\ndef test_plant():\n${plant
        .split('\n')
        .map((line) => `    ${line}`)
        .join('\n')}\n`,
    );
    const report = await runTestSuite({ workspace: worktree.workTree, language: 'python', mode: 'bwrap' });
    expect(report.outcome).toBe('completed');
    expect(report.cases.find((c) => c.name.endsWith('test_plant'))?.status).toBe('passed');
    const commit = await commitAll(worktree, 'aca: attempt 1, coder: fix add');
    await diffCommits(worktree, worktree.baseCommit, commit ?? 'HEAD');
    await diffCommits(worktree, worktree.baseCommit, commit ?? 'HEAD', true);
    return commit;
  }

  function expectNothingRan(): void {
    const ran = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(path.basename(MARK)));
    expect(ran).toEqual([]);
  }

  /** The commit is on the run's branch in the user's repository, and the user's checkout is as it was. */
  function expectCommitOnRunBranch(commit: string | null): void {
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    expect(userGit(repo, 'rev-parse', worktree.branch).trim()).toBe(commit);
    expect(userGit(repo, 'show', `${worktree.branch}:calc.py`)).toContain('return a + b');
    expect(userGit(repo, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toContain('return a - b');
    expect(userGit(repo, 'status', '--porcelain')).toBe('');
  }

  const evilGitDir = (where: string) => `
evil = pathlib.Path(${py(where)})
subprocess.run(['git', 'init', '-q', str(evil)], check=True, env={'PATH': '/usr/bin:/bin', 'HOME': '/tmp'})
gitdir = evil / '.git'
cfg = gitdir / 'config'
cfg.write_text(cfg.read_text() + '[core]\\n\\tfsmonitor = touch ${marker('fsmonitor')}\\n\\thooksPath = hooks\\n')
hook = gitdir / 'hooks' / 'pre-commit'
hook.write_text('#!/bin/sh\\ntouch ${marker('planted-hook')}\\n')
hook.chmod(0o755)
`;

  test('a .git file pointed at a git directory the test made is never followed', async () => {
    const commit = await plantThenCommit(`${evilGitDir('evil')}
pathlib.Path('.git').write_text('gitdir: ' + str((gitdir).resolve()) + '\\n')`);
    expectNothingRan();
    expectCommitOnRunBranch(commit);
  });

  test('a .git file replaced by a whole repository of the test is never used', async () => {
    const commit = await plantThenCommit(`${evilGitDir('evil')}
os.remove('.git')
os.rename(str(gitdir), '.git')`);
    expectNothingRan();
    expectCommitOnRunBranch(commit);
  });

  test("the user's own hooks do not run on aca's commits", async () => {
    const commit = await plantThenCommit(`pathlib.Path('extra.py').write_text('x = 1\\n')`);
    expectNothingRan();
    expectCommitOnRunBranch(commit);
  });

  test('.gitattributes cannot name a filter, diff driver or textconv of the repository', async () => {
    const commit = await plantThenCommit(
      `pathlib.Path('.gitattributes').write_text('*.py filter=userfilter diff=userdiff\\n*.txt diff=usertext\\n')\npathlib.Path('notes.txt').write_text('hello\\n')`,
    );
    expectNothingRan();
    expectCommitOnRunBranch(commit);
  });

  test('a nested repository with its own hostile config is not entered', async () => {
    const commit = await plantThenCommit(`${evilGitDir('vendor/lib')}
(evil / 'lib.py').write_text('y = 2\\n')`);
    expectNothingRan();
    expectCommitOnRunBranch(commit);
  });

  test('removing the run leaves the repository as it was before the run', async () => {
    const before = userGit(repo, 'for-each-ref', '--format=%(refname)');
    await removeRunWorktree(worktree);
    expect(fs.existsSync(worktree.workTree)).toBe(false);
    expect(userGit(repo, 'for-each-ref', '--format=%(refname)')).not.toContain(worktree.branch);
    expect(before).toContain(`refs/heads/${worktree.branch}`);
    expect(userGit(repo, 'worktree', 'list')).not.toContain(worktree.workTree);
  });
});
