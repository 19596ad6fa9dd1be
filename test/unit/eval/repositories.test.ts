import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { evalRepositoryCopy, findRepoSource } from '../../../src/eval/repositories';
import { gitIn, repoDigest, writeFiles } from '../../helpers/repo-fixtures';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-eval-repos-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function has(dir: string, commit: string): boolean {
  try {
    gitIn(dir, 'cat-file', '-e', `${commit}^{commit}`);
    return true;
  } catch {
    return false;
  }
}

describe("aca's copy of an instance's repository", () => {
  const repos = path.join(root, 'repos');
  const source = path.join(repos, 'acme__lib');
  let base: string;
  let fix: string;

  beforeAll(() => {
    fs.mkdirSync(source, { recursive: true });
    gitIn(source, 'init', '--quiet', '--initial-branch=main');
    writeFiles(source, { 'lib.py': 'x = 1\n' });
    gitIn(source, 'add', '-A');
    gitIn(source, 'commit', '--quiet', '-m', 'base');
    base = gitIn(source, 'rev-parse', 'HEAD').trim();
    writeFiles(source, { 'lib.py': 'x = 2\n' });
    gitIn(source, 'commit', '--quiet', '-am', 'the fix');
    fix = gitIn(source, 'rev-parse', 'HEAD').trim();
    gitIn(root, 'clone', '--quiet', '--bare', source, path.join(repos, 'acme__bare'));
    gitIn(source, 'bundle', 'create', '--quiet', path.join(repos, 'acme__bundled.bundle'), '--all');
  });

  test('holds the base commits and their history, never a later commit, and leaves the source as it was', async () => {
    const before = repoDigest(source);
    const home = path.join(root, 'home-1');
    const copy = await evalRepositoryCopy(home, findRepoSource(repos, 'acme/lib'), [base.slice(0, 10)]);
    expect(has(copy, base)).toBe(true);
    // The fix is the commit after the base: an agent's run must not find it in the copy.
    expect(has(copy, fix)).toBe(false);
    expect(gitIn(copy, 'for-each-ref', '--format=%(refname)').trim().split('\n')).toEqual([
      `refs/aca-eval/base/${base}`,
    ]);
    // Asked for a later base, the same copy fetches it.
    expect(await evalRepositoryCopy(home, findRepoSource(repos, 'acme/lib'), [fix])).toBe(copy);
    expect(has(copy, fix)).toBe(true);
    expect(repoDigest(source)).toEqual(before);
  });

  test('a bare repository and a bundle are sources too; a missing commit or repository is bad input', async () => {
    const home = path.join(root, 'home-2');
    expect(findRepoSource(repos, 'acme/bare').kind).toBe('repository');
    expect(findRepoSource(repos, 'acme/bundled').kind).toBe('bundle');
    for (const name of ['acme/bare', 'acme/bundled']) {
      const copy = await evalRepositoryCopy(home, findRepoSource(repos, name), [base]);
      expect(has(copy, base)).toBe(true);
      expect(has(copy, fix)).toBe(false);
    }
    await expect(
      evalRepositoryCopy(home, findRepoSource(repos, 'acme/bare'), ['0123456789']),
    ).rejects.toThrow(/lacks base commit 0123456789/);
    expect(() => findRepoSource(repos, 'acme/none')).toThrow(/repository acme\/none is not in/);
  });
});
