import { repositoryLanguage } from '../../../../src/repo';
import { UserInputError } from '../../../../src/shared/errors';
import { gitIn, makeRepo, removeFixtureRepos } from '../../../helpers/repo-fixtures';

describe("a run's language against its repository", () => {
  afterAll(removeFixtureRepos);
  const head = (repo: string) => gitIn(repo, 'rev-parse', 'HEAD').trim();
  const language = (repo: string, asked?: 'python' | 'typescript' | 'javascript') =>
    repositoryLanguage({ gitDir: `${repo}/.git` }, head(repo), asked, repo);

  const python = () =>
    makeRepo({
      'pyproject.toml': '[project]\nname = "x"\n',
      'x/core.py': 'X = 1\n',
      'tests/test_core.py': 'def test(): pass\n',
    });
  const typescript = () =>
    makeRepo({
      'package.json': '{"name": "x"}',
      'tsconfig.json': '{}',
      'src/index.ts': 'export const x = 1;\n',
      'jest.config.js': 'module.exports = {};\n',
      'types/extra.d.ts': 'declare const y: number;\n',
    });

  test('detected from the committed files when not given', async () => {
    expect(await language(python())).toBe('python');
    expect(await language(typescript())).toBe('typescript');
    expect(await language(makeRepo({ 'package.json': '{}', 'index.js': '1;\n', 'lib/a.js': '2;\n' }))).toBe(
      'javascript',
    );
    // Vendored code does not count: a Python project with a committed node_modules stays Python.
    expect(
      await language(
        makeRepo({ 'app.py': 'x = 1\n', 'node_modules/a/index.js': '1;\n', 'node_modules/a/b.js': '1;\n' }),
      ),
    ).toBe('python');
  });

  test('--language typescript on a Python repository is bad input naming what the repository holds', async () => {
    const repo = python();
    const refused = await language(repo, 'typescript').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UserInputError);
    expect((refused as Error).message).toBe(
      `--language typescript does not fit the repository at ${repo}: it has no typescript files, but python files (--language python, or leave --language out to detect it)`,
    );
    await expect(language(typescript(), 'python')).rejects.toThrow(
      /no python files, but typescript and javascript files/,
    );
  });

  test('a language that fits, or a repository without code of any of them, is taken as asked', async () => {
    expect(await language(typescript(), 'typescript')).toBe('typescript');
    expect(await language(typescript(), 'javascript')).toBe('javascript');
    expect(
      await language(makeRepo({ 'status.txt': 'broken\n', Makefile: 'test:\n\ttrue\n' }), 'python'),
    ).toBe('python');
  });
});
