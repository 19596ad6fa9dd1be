/**
 * The "Review with care" classification of a run's changes (review-risks.ts), on real commits
 * made the way the worker makes them.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { reviewWithCareLines } from '../../../../src/cli/review-with-care';
import {
  ApplyNeedsConsentError,
  linkReach,
  reviewRisks,
  commitAll,
  createRunWorktree,
  type CommitTree,
  type ReviewRisk,
} from '../../../../src/repo';
import { printableName } from '../../../../src/shared/terminal-text';
import { tempDirs } from '../../../helpers/temp-dirs';
import { makeUserRepo, userGit } from '../../../helpers/run-fixture';

const tempDir = tempDirs('aca-review-risks-');

/** A run from a repository holding `base` that writes `files` and `links`, then the risks of its changes. */
async function risksOf(
  base: Record<string, string>,
  change: { files?: Record<string, string | Buffer>; links?: Record<string, string>; remove?: string[] },
): Promise<ReviewRisk[]> {
  const root = tempDir();
  const repo = makeUserRepo(path.join(root, 'repo'), base);
  const worktree = await createRunWorktree({
    repoDir: repo,
    workTree: path.join(root, 'ws'),
    branch: 'aca/r',
    base: 'HEAD',
  });
  for (const [name, content] of Object.entries(change.files ?? {})) {
    fs.mkdirSync(path.dirname(path.join(worktree.workTree, name)), { recursive: true });
    fs.writeFileSync(path.join(worktree.workTree, name), content);
  }
  for (const [name, target] of Object.entries(change.links ?? {})) {
    fs.mkdirSync(path.dirname(path.join(worktree.workTree, name)), { recursive: true });
    fs.symlinkSync(target, path.join(worktree.workTree, name));
  }
  for (const name of change.remove ?? []) fs.rmSync(path.join(worktree.workTree, name));
  const head = await commitAll(worktree, 'aca: attempt 1');
  return reviewRisks({ gitDir: worktree.commonDir }, worktree.baseCommit, head ?? worktree.baseCommit);
}

const summary = (risks: ReviewRisk[]) =>
  risks.map(
    (r) =>
      `${r.kind} ${r.path} ${r.change}${r.target !== undefined ? ` -> ${r.target}` : ''}${r.needs ? ` [${r.needs}]` : ''}`,
  );

describe('review risks', () => {
  test('a plain source change has none', async () => {
    expect(
      await risksOf({ 'calc.py': 'x = 1\n' }, { files: { 'calc.py': 'x = 2\n', 'README.md': 'hi\n' } }),
    ).toEqual([]);
  });

  test('binary files: a new one (or one that was text) needs --allow-binary, a changed one is listed, a deleted one is not', async () => {
    const risks = await risksOf(
      { 'logo.png': '\x89PNG\0old', 'old.bin': 'a\0b', 'run.sh': 'echo hi\n' },
      {
        files: {
          'tool.so': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]),
          'logo.png': '\x89PNG\0new',
          'run.sh': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 3]),
        },
        remove: ['old.bin'],
      },
    );
    expect(summary(risks)).toEqual([
      'binary logo.png modified',
      'binary run.sh modified [allow-binary]',
      'binary tool.so added [allow-binary]',
    ]);
    expect(risks.find((r) => r.path === 'run.sh')!.note).toContain('text file turned binary');
  });

  test('links: where they point, and those that leave the repository need --allow-links', async () => {
    const risks = await risksOf(
      { 'src/a.py': 'x = 1\n', 'docs/readme.md': 'r\n' },
      {
        links: {
          abs: '/etc/passwd',
          'src/up': '../../outside',
          'src/sibling': '../docs/readme.md',
          'src/here': 'a.py',
          // Inside on its face, but through a link that leaves: resolved as the kernel would.
          hop: 'escape/x',
          escape: '..',
          loop1: 'loop2',
          loop2: 'loop1',
        },
      },
    );
    expect(summary(risks)).toEqual([
      'link abs added -> /etc/passwd [allow-links]',
      'link escape added -> .. [allow-links]',
      'link hop added -> escape/x [allow-links]',
      'link loop1 added -> loop2 [allow-links]',
      'link loop2 added -> loop1 [allow-links]',
      'link src/here added -> a.py',
      'link src/sibling added -> ../docs/readme.md',
      'link src/up added -> ../../outside [allow-links]',
    ]);
    expect(risks.find((r) => r.path === 'abs')).toMatchObject({
      outside: true,
      note: expect.stringContaining('outside'),
    });
  });

  test('git, aca, test runner and Python start-up configuration are listed', async () => {
    const risks = await risksOf(
      {
        'pyproject.toml': '[project]\nname = "x"\n',
        'setup.cfg': '[metadata]\nname = x\n',
        'tox.ini': '[tox]\nenvlist = py3\n',
        'other/pyproject.toml': '[project]\nname = "y"\n',
        'package.json': '{"name": "x"}\n',
      },
      {
        files: {
          '.gitmodules': '[submodule "x"]\n\tpath = x\n\turl = ext::sh -c touch% /tmp/pwned\n',
          '.gitattributes': '*.py filter=lfs\n',
          'sub/.gitattributes': '* -diff\n',
          '.aca.json': '{"testCommand": "sh -c true"}\n',
          'tests/conftest.py': 'import os\n',
          'pytest.ini': '[pytest]\naddopts = -p no:x\n',
          'pyproject.toml': '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
          'other/pyproject.toml': '[project]\nname = "z"\n',
          'setup.cfg': '[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n',
          'tox.ini': '[tox]\nenvlist = py3\n[pytest]\naddopts = -q\n',
          'jest.config.ts': 'export default {};\n',
          'package.json': '{"name": "x", "jest": {"setupFiles": ["./x.js"]}}\n',
          'babel.config.js': 'module.exports = {};\n',
          'sitecustomize.py': 'import os\n',
          'lib/usercustomize.py': 'import os\n',
          'evil.pth': 'import os\n',
        },
      },
    );
    expect(summary(risks)).toEqual([
      'aca-config .aca.json added',
      'gitattributes .gitattributes added [allow-attributes]',
      'gitmodules .gitmodules added',
      'test-config babel.config.js added',
      'python-startup evil.pth added',
      'test-config jest.config.ts added',
      'python-startup lib/usercustomize.py added',
      'test-config package.json modified',
      'test-config pyproject.toml modified',
      'test-config pytest.ini added',
      'test-config setup.cfg modified',
      'python-startup sitecustomize.py added',
      'gitattributes sub/.gitattributes added [allow-attributes]',
      'test-config tests/conftest.py added',
      'test-config tox.ini modified',
    ]);
  });

  test('removing configuration is listed too', async () => {
    const risks = await risksOf({ 'conftest.py': 'x = 1\n', 'a.py': 'y\n' }, { remove: ['conftest.py'] });
    expect(summary(risks)).toEqual(['test-config conftest.py deleted']);
  });

  test('link resolution follows links component by component', async () => {
    const links = new Map([
      ['a/b', '../c'],
      ['c', 'd/e'],
      ['up', '..'],
    ]);
    const tree: CommitTree = {
      entry: async () => undefined,
      readLink: async (parts) => links.get(parts.join('/')),
      isGitDirectory: async (parts) => parts.join('/') === 'bare',
    };
    expect(await linkReach('x/y', '../a/b/f', tree)).toBe('inside');
    expect(await linkReach('x', 'up/etc', tree)).toBe('outside');
    expect(await linkReach('x', 'a/../up', tree)).toBe('outside');
    expect(await linkReach('deep/er/x', '../../../../y', tree)).toBe('outside');
    expect(await linkReach('deep/er/x', '../../y', tree)).toBe('inside');
    expect(await linkReach('x', '', tree)).toBe('inside');
    expect(await linkReach('x', 'bare/hooks', tree)).toBe('git-dir');
    expect(await linkReach('x', 'a/.Git/../b', tree)).toBe('git-dir');
  });

  test("links into git directories need --allow-links like links out: the checkout's .git under any spelling, or a folder laid out as one", async () => {
    const risks = await risksOf(
      {
        'dir/x.py': 'x = 1\n',
        'docs/readme.md': 'r\n',
        '.gitignore': '*.log\n',
        '.github/workflows/ci.yml': 'on: push\n',
        // Laid out as git directories: a bare repository, a linked worktree's folder.
        'vendor/bare/HEAD': 'ref: refs/heads/main\n',
        'vendor/bare/objects/keep': '',
        'vendor/bare/refs/keep': '',
        'wt/HEAD': '0000000000000000000000000000000000000000\n',
        'wt/commondir': '../vendor/bare\n',
        // A HEAD alone does not make one.
        'notes/HEAD': 'a heading\n',
      },
      {
        links: {
          'tools/hooks': '../.git/hooks',
          gitconfig: '.git/config',
          x: '.git',
          'a/b/c': '../../.git/objects',
          'a/b2': '../../.git/objects',
          dot: './.git',
          caps: '.GIT/hooks',
          back: 'dir/../.git',
          short: 'git~1/config',
          ntfs: '.git. /config',
          hfs: '.g\u200cit/hooks',
          through: 'x/hooks',
          bare: 'vendor/bare',
          inbare: 'vendor/bare/hooks/pre-commit',
          worktree: 'wt',
          'deep/nested': '../vendor/lib/.git/config',
          // Within the repository, and not git directories.
          readme: 'docs/readme.md',
          workflows: '.github/workflows',
          ignore: '.gitignore',
          headnotes: 'notes/HEAD',
        },
      },
    );
    const into = (name: string) =>
      `link ${name} added -> ${risks.find((r) => r.path === name)!.target} [allow-links]`;
    expect(summary(risks)).toEqual([
      into('a/b/c'),
      'link a/b2 added -> ../../.git/objects [allow-links]',
      into('back'),
      into('bare'),
      into('caps'),
      into('deep/nested'),
      into('dot'),
      into('gitconfig'),
      'link headnotes added -> notes/HEAD',
      into('hfs'),
      'link ignore added -> .gitignore',
      into('inbare'),
      into('ntfs'),
      'link readme added -> docs/readme.md',
      into('short'),
      into('through'),
      into('tools/hooks'),
      'link workflows added -> .github/workflows',
      into('worktree'),
      into('x'),
    ]);
    const gitDirLinks = risks.filter((r) => r.note.includes('git directory')).map((r) => r.path);
    expect(gitDirLinks).toHaveLength(15);
    expect(risks.find((r) => r.path === 'tools/hooks')).toMatchObject({
      outside: true,
      needs: 'allow-links',
      note: 'a link into a git directory (.git), outside the repository',
    });
    expect(risks.find((r) => r.path === 'a/b2')!.note).toBe('a link pointing outside the repository');
  });

  test('a folder laid out as a git directory that the run adds or changes is named, once', async () => {
    const risks = await risksOf(
      {
        'fixtures/repo/HEAD': 'ref: refs/heads/main\n',
        'fixtures/repo/objects/keep': '',
        'fixtures/repo/refs/keep': '',
      },
      {
        files: {
          'fixtures/repo/config': '[core]\n\tfsmonitor = "touch /tmp/pwned"\n',
          'tools/bare/HEAD': 'ref: refs/heads/main\n',
          'tools/bare/objects/info/keep': '',
          'tools/bare/refs/heads/keep': '',
          'tools/bare/hooks/post-checkout': '#!/bin/sh\n',
          // Not git directories: a HEAD alone, git's names in a plain folder.
          'notes/HEAD': 'a heading\n',
          'src/config/objects.py': 'x = 1\n',
        },
      },
    );
    expect(summary(risks)).toEqual([
      'git-directory fixtures/repo modified',
      'git-directory tools/bare added',
    ]);
  });

  test('a link target of 1 MB (written by git itself) counts as outside and is shown cut', async () => {
    const root = tempDir();
    const repo = makeUserRepo(path.join(root, 'repo'), { 'a.txt': 'a\n' });
    const base = userGit(repo, 'rev-parse', 'HEAD').trim();
    const target = 'a/'.repeat(512 * 1024);
    const blob = execFileSync('git', ['-C', repo, 'hash-object', '-w', '--stdin'], { input: target })
      .toString()
      .trim();
    userGit(repo, 'update-index', '--add', '--cacheinfo', `120000,${blob},long`);
    userGit(repo, 'commit', '-q', '-m', 'long link');
    const head = userGit(repo, 'rev-parse', 'HEAD').trim();
    const risks = await reviewRisks({ gitDir: path.join(repo, '.git') }, base, head);
    expect(risks).toEqual([expect.objectContaining({ path: 'long', target, needs: 'allow-links' })]);
    const [heading, line] = reviewWithCareLines(risks);
    expect(heading).toBe('Review with care:');
    expect(line!.length).toBeLessThan(4200);
    expect(line).toContain(`[... ${target.length - 4000} more characters not shown]`);
    expect(new ApplyNeedsConsentError(risks).message.length).toBeLessThan(4400);
  });

  test('names that are not UTF-8 are resolved as their bytes and shown as \\x escapes', async () => {
    const root = tempDir();
    const repo = makeUserRepo(path.join(root, 'repo'), { 'a.txt': 'a\n' });
    const base = userGit(repo, 'rev-parse', 'HEAD').trim();
    const name = (...parts: (string | number[])[]) =>
      Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
    const join = (...parts: Buffer[]) => Buffer.concat([Buffer.from(repo + '/'), ...parts]);
    // \xfe/up leads to the top; \xff/up is a plain folder. Read as text, both names are U+FFFD.
    fs.mkdirSync(join(name([0xfe])));
    fs.symlinkSync('..', join(name([0xfe], '/up')));
    fs.mkdirSync(join(name([0xff], '/up')), { recursive: true });
    fs.writeFileSync(join(name([0xff], '/up/keep')), '');
    fs.symlinkSync(name([0xfe], '/up/..'), join(name('escape')));
    fs.symlinkSync(name([0xff], '/up/..'), join(name('stays')));
    userGit(repo, 'add', '-A');
    userGit(repo, 'commit', '-q', '-m', 'bytes');
    const head = userGit(repo, 'rev-parse', 'HEAD').trim();
    const risks = await reviewRisks({ gitDir: path.join(repo, '.git') }, base, head);
    expect(risks.map((r) => [printableName(r.path), printableName(r.target ?? ''), r.needs])).toEqual([
      ['escape', '"\\xfe/up/.."', 'allow-links'],
      ['stays', '"\\xff/up/.."', null],
      ['"\\xfe/up"', '..', null],
    ]);
  });
});
