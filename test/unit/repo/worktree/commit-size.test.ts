/**
 * The size check before a commit (src/repo/worktree/commit-size.ts), on both of its paths: a small work
 * tree sized by a walk of its own, and a larger one (or one that does not fit) listed by git.
 * Hostile names and ignored files must neither slip a large file past it nor fail a step that
 * git would commit.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkCommitSize, WorkTreeTooLargeError } from '../../../../src/repo';
// eslint-disable-next-line no-restricted-imports -- the spy must sit on the module commit-size.ts calls gitBytes through
import * as gitModule from '../../../../src/repo/git/git';
import { rawGit } from '../../../helpers/raw-git';
import { tempDirs } from '../../../helpers/temp-dirs';

const LIMITS = { fileBytes: 10_000, totalBytes: 50_000 };
const MiB = 1024 * 1024;
const tempDir = tempDirs('aca-commit-size-');

function repository(): { gitDir: string; workTree: string } {
  const workTree = tempDir();
  const gitDir = path.join(workTree, '.git');
  rawGit(gitDir, workTree, 'init', '--quiet');
  fs.writeFileSync(path.join(workTree, 'README'), 'x\n');
  rawGit(gitDir, workTree, 'add', '-A');
  rawGit(gitDir, workTree, 'commit', '--quiet', '-m', 'base');
  return { gitDir, workTree };
}

/** A file of `bytes` that takes no disk: the check reads sizes only, never a byte. */
function sparseFile(file: string, bytes: number): void {
  fs.writeFileSync(file, '');
  fs.truncateSync(file, bytes);
}

/** Past the walk's bound: the check has to ask git. */
function manyFiles(workTree: string, count = 2_100): void {
  const folder = path.join(workTree, 'many');
  fs.mkdirSync(folder);
  for (let i = 0; i < count; i++) fs.writeFileSync(path.join(folder, `f${i}.txt`), '');
}

const sizeError = (target: { gitDir: string; workTree: string }) =>
  checkCommitSize(target, ['.'], LIMITS).then(
    () => null,
    (err: unknown) => err,
  );

/** Refused, with these figures: the bytes as git would hash them. */
async function expectRefused(
  target: { gitDir: string; workTree: string },
  figures: Partial<Pick<WorkTreeTooLargeError, 'largestPath' | 'largestBytes' | 'totalBytes'>>,
): Promise<void> {
  const error = await sizeError(target);
  expect(error).toBeInstanceOf(WorkTreeTooLargeError);
  expect(error).toMatchObject(figures);
}

describe.each([
  ['a small tree (walked)', false],
  ['a tree of more than 2,000 entries (listed by git)', true],
])('%s', (_name, large) => {
  /** A committed repository, with 2,100 more entries on the git-listed path. */
  const fresh = (): { gitDir: string; workTree: string } => {
    const target = repository();
    if (large) manyFiles(target.workTree);
    return target;
  };

  test('files within the limits pass; one over the file limit is named', async () => {
    const target = fresh();
    fs.writeFileSync(path.join(target.workTree, 'ok.bin'), Buffer.alloc(LIMITS.fileBytes));
    const listing = jest.spyOn(gitModule, 'gitBytes');
    try {
      expect(await sizeError(target)).toBeNull();
      // A small tree that fits is sized by the walk alone. A large one is listed by git, and a file
      // that could outgrow the limit if it had an encoding has git asked whether it has one.
      expect(listing.mock.calls.map(([, args]) => args[0])).toEqual(
        large ? ['ls-files', 'diff-files', 'check-attr'] : [],
      );
    } finally {
      listing.mockRestore();
    }
    fs.writeFileSync(path.join(target.workTree, 'big.bin'), Buffer.alloc(LIMITS.fileBytes + 1));
    await expectRefused(target, { largestPath: 'big.bin' });
  });

  test('a large file whose name is not UTF-8 is sized, beside a small one its decoded name would name', async () => {
    const target = fresh();
    const top = Buffer.from(target.workTree + '/');
    fs.writeFileSync(
      Buffer.concat([top, Buffer.from([0x62, 0xff, 0x2e, 0x62, 0x69, 0x6e])]),
      Buffer.alloc(LIMITS.fileBytes * 2),
    );
    fs.writeFileSync(path.join(target.workTree, 'b\uFFFD.bin'), 'small');
    await expectRefused(target, { largestBytes: LIMITS.fileBytes * 2 });
  });

  test('a large file in a folder whose name is not UTF-8 is sized', async () => {
    const target = fresh();
    const folder = Buffer.concat([Buffer.from(target.workTree + '/'), Buffer.from([0x64, 0xfe])]);
    fs.mkdirSync(folder);
    fs.mkdirSync(path.join(target.workTree, 'd\uFFFD'));
    fs.writeFileSync(Buffer.concat([folder, Buffer.from('/data.bin')]), Buffer.alloc(LIMITS.fileBytes + 1));
    await expectRefused(target, { largestBytes: LIMITS.fileBytes + 1 });
  });

  test('ignored and unchanged tracked files over the limits do not count: git would add neither', async () => {
    const target = fresh();
    fs.writeFileSync(path.join(target.workTree, 'tracked.bin'), Buffer.alloc(LIMITS.fileBytes * 2));
    rawGit(target.gitDir, target.workTree, 'add', '--', 'tracked.bin');
    rawGit(target.gitDir, target.workTree, 'commit', '--quiet', '-m', 'tracked');
    fs.writeFileSync(path.join(target.workTree, '.gitignore'), 'build/\n');
    fs.mkdirSync(path.join(target.workTree, 'build'));
    for (let i = 0; i < 6; i++)
      fs.writeFileSync(path.join(target.workTree, 'build', `out${i}.bin`), Buffer.alloc(LIMITS.fileBytes));
    expect(await sizeError(target)).toBeNull();
    // Changed, the tracked file counts again.
    fs.appendFileSync(path.join(target.workTree, 'tracked.bin'), 'x');
    expect(await sizeError(target)).toBeInstanceOf(WorkTreeTooLargeError);
  });

  test('a file git would convert from a working-tree-encoding is sized as it will be hashed, three times larger', async () => {
    const target = fresh();
    fs.writeFileSync(path.join(target.workTree, '.gitattributes'), '*.txt working-tree-encoding=CP1252\n');
    // 0x80 is the euro sign in CP1252: three bytes of UTF-8 each.
    fs.writeFileSync(path.join(target.workTree, 'data.txt'), Buffer.alloc(LIMITS.fileBytes / 2, 0x80));
    await expectRefused(target, { largestPath: 'data.txt', largestBytes: (LIMITS.fileBytes / 2) * 3 });
    // A file the attributes give no encoding is sized as it is, beside them.
    fs.renameSync(path.join(target.workTree, 'data.txt'), path.join(target.workTree, 'data.bin'));
    expect(await sizeError(target)).toBeNull();
  });

  test('TSCII, whose byte can become twelve of UTF-8, is sized at twelve times', async () => {
    const target = fresh();
    fs.writeFileSync(path.join(target.workTree, '.gitattributes'), '*.txt working-tree-encoding=TSCII\n');
    fs.writeFileSync(path.join(target.workTree, 'tamil.txt'), Buffer.alloc(1_000, 0x82));
    await expectRefused(target, { largestBytes: 12_000 });
  });

  test("a .gitattributes deleted in this step still counts: git reads the index's copy", async () => {
    const target = fresh();
    fs.writeFileSync(path.join(target.workTree, '.gitattributes'), '*.txt working-tree-encoding=CP1252\n');
    fs.writeFileSync(path.join(target.workTree, 'a.txt'), 'hi');
    rawGit(target.gitDir, target.workTree, 'add', '--', '.gitattributes', 'a.txt');
    rawGit(target.gitDir, target.workTree, 'commit', '--quiet', '-m', 'attributes');
    fs.rmSync(path.join(target.workTree, '.gitattributes'));
    fs.writeFileSync(path.join(target.workTree, 'a.txt'), Buffer.alloc(LIMITS.fileBytes / 2, 0x80));
    await expectRefused(target, { largestBytes: (LIMITS.fileBytes / 2) * 3 });
  });

  test('tracked files rewritten with their old content count: git hashes them again', async () => {
    const target = fresh();
    const names = [1, 2, 3, 4, 5, 6].map((i) => `same${i}.bin`);
    for (const name of names) fs.writeFileSync(path.join(target.workTree, name), Buffer.alloc(9_000, 1));
    rawGit(target.gitDir, target.workTree, 'add', '--', ...names);
    rawGit(target.gitDir, target.workTree, 'commit', '--quiet', '-m', 'six');
    expect(await sizeError(target)).toBeNull();
    // Same bytes, same size, a new ctime: git cannot tell without reading them all.
    for (const name of names) {
      const file = path.join(target.workTree, name);
      fs.copyFileSync(file, `${file}.tmp`);
      fs.renameSync(`${file}.tmp`, file);
    }
    await expectRefused(target, { totalBytes: 54_000 });
  });

  test('many files, each well under the file limit, over the total together: refused with the total named', async () => {
    const target = fresh();
    const limits = { fileBytes: MiB, totalBytes: 8 * MiB };
    const addFiles = (from: number, to: number) => {
      for (let i = from; i < to; i++) sparseFile(path.join(target.workTree, `part${i}.bin`), MiB / 4);
    };
    addFiles(0, 30);
    const listing = jest.spyOn(gitModule, 'gitBytes');
    try {
      // 30 quarters of a MiB: under the total.
      await expect(checkCommitSize(target, ['.'], limits)).resolves.toBeUndefined();
      // A small tree's walk adds the sizes up itself: it needs no git to know they fit.
      if (!large) expect(listing).not.toHaveBeenCalled();
    } finally {
      listing.mockRestore();
    }
    addFiles(30, 40);
    const error = await checkCommitSize(target, ['.'], limits).then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(WorkTreeTooLargeError);
    expect(error).toMatchObject({ totalBytes: 10 * MiB, largestBytes: MiB / 4, files: large ? 2_140 : 40 });
    expect((error as Error).message).toBe(
      `the work tree's ${large ? 2_140 : 40} new or changed files come to 10.0 MiB, over the 8.0 MiB one step may commit (the largest: ${(error as WorkTreeTooLargeError).largestPath}, 0.3 MiB); nothing was committed`,
    );
    expect((error as WorkTreeTooLargeError).largestPath).toMatch(/^part\d+\.bin$/);
  });

  test('a link to a large file is not followed: the link is what would be committed', async () => {
    const target = fresh();
    const outside = path.join(tempDir(), 'large.bin');
    fs.writeFileSync(outside, Buffer.alloc(LIMITS.totalBytes * 2));
    fs.symlinkSync(outside, path.join(target.workTree, 'link.bin'));
    expect(await sizeError(target)).toBeNull();
  });
});
