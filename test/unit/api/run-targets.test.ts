/**
 * A run's targets as the request is checked, before anything starts: `--target` (also through
 * the library API) and `.aca.json`'s `targets`, merged; each well formed and its file present
 * where the run starts.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateRunRequest, type StartRunRequest } from '../../../src/api/run-request';
import { loadConfig } from '../../../src/config';
import { parseProjectConfig } from '../../../src/repo';
import { UserInputError } from '../../../src/shared/errors';
import { tempDirs } from '../../helpers/temp-dirs';

const tempDir = tempDirs('aca-targets-test-');

function userRepo(files: Record<string, string>): string {
  const dir = tempDir();
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
    });
  git('init', '--quiet', '--initial-branch=main');
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  git('add', '-A');
  git('commit', '--quiet', '-m', 'first');
  return dir;
}

const config = () => loadConfig({ ACA_HOME: tempDir(), ACA_WORKSPACES: tempDir() });
const request = (more: Partial<StartRunRequest>) => validateRunRequest({ task: 'fix it', ...more }, config());
const refusal = (more: Partial<StartRunRequest>) =>
  request(more).then(
    () => {
      throw new Error('the request was accepted');
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(UserInputError);
      return (err as Error).message;
    },
  );

describe('the targets of a run request', () => {
  test("--target and .aca.json's targets are merged, the file's first, each once", async () => {
    const repo = userRepo({
      'tests/test_a.py': 'def test_a():\n    pass\n',
      'tests/test_b.py': 'def test_b():\n    pass\n',
      '.aca.json': JSON.stringify({ targets: ['tests/test_b.py'] }),
    });
    const valid = await request({ repo, targets: ['tests/test_a.py::test_a[1]', 'tests/test_b.py'] });
    expect(valid.input.targets).toEqual(['tests/test_b.py', 'tests/test_a.py::test_a[1]']);
    // Without any, the input has none: a run started before targets looks the same.
    expect((await request({ repo: userRepo({ 'a.py': '' }) })).input).not.toHaveProperty('targets');
  });

  test('a target whose file is not at the base commit is refused, whatever the working tree holds', async () => {
    const repo = userRepo({ 'tests/test_a.py': 'def test_a():\n    pass\n' });
    fs.writeFileSync(path.join(repo, 'tests', 'test_new.py'), 'def test_new():\n    pass\n');
    const message = await refusal({ repo, targets: ['tests/test_new.py::test_new'] });
    expect(message).toMatch(
      /^--target tests\/test_new\.py::test_new: there is no file tests\/test_new\.py at the base commit [0-9a-f]{10} of /,
    );
    // A folder is not a test file.
    expect(await refusal({ repo, targets: ['tests'] })).toMatch(/there is no file tests at the base commit/);
  });

  test(".aca.json's own target is named as such", async () => {
    const repo = userRepo({ '.aca.json': JSON.stringify({ targets: ['tests/gone.py'] }) });
    expect(await refusal({ repo })).toMatch(
      /^\.aca\.json target tests\/gone\.py: there is no file tests\/gone\.py/,
    );
  });

  test('without --repo, a target must be one of the --tests files', async () => {
    const tests = tempDir();
    fs.mkdirSync(path.join(tests, 'tests'));
    fs.writeFileSync(path.join(tests, 'tests', 'test_x.py'), 'def test_x():\n    pass\n');
    const valid = await request({ testsDir: tests, targets: ['tests/test_x.py::test_x'] });
    expect(valid.input.targets).toEqual(['tests/test_x.py::test_x']);
    expect(await refusal({ targets: ['tests/test_x.py'] })).toBe(
      '--target tests/test_x.py: a run without --repo starts with no tests but the --tests files, and tests/test_x.py is not one of them',
    );
  });

  test.each([
    ['/etc/passwd', '--target "/etc/passwd" must start with a path relative to the repository'],
    [
      '../x.py',
      '--target "../x.py" must name a file inside the repository (no "..", "." or empty path parts)',
    ],
    ['', '--target "" is empty'],
  ])('a malformed target %j is refused', async (id, message) => {
    expect(await refusal({ repo: userRepo({ 'a.py': '' }), targets: [id] })).toBe(message);
  });

  test(".aca.json's targets are checked like the rest of the file", () => {
    expect(parseProjectConfig('{"targets": ["tests/t.py::a"]}', '.aca.json').targets).toEqual([
      'tests/t.py::a',
    ]);
    expect(() => parseProjectConfig('{"targets": ["/abs.py"]}', '.aca.json')).toThrow(
      '.aca.json: targets.0: target "/abs.py" must start with a path relative to the repository',
    );
    expect(() => parseProjectConfig('{"targets": "tests/t.py"}', '.aca.json')).toThrow(/targets: /);
  });
});
