import * as fs from 'node:fs';
import * as path from 'node:path';
import { detectTestCommand, findDependencyFolders } from '../../../src/sandbox';
import { UserInputError } from '../../../src/shared/errors';
import type { DependencyFolder } from '../../../src/shared/test-command';
import { makeRepo, removeRepos } from '../../helpers/project-fixture';

afterAll(removeRepos);

/** A repository with the given files (a node_modules of empty runner entry points is enough here). */
function repoWith(files: Record<string, string>): string {
  const repo = makeRepo();
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
    fs.writeFileSync(path.join(repo, name), text);
  }
  return repo;
}

function withScript(test: string | undefined, files: Record<string, string> = {}): string {
  return repoWith({
    'package.json': JSON.stringify({ name: 'p', scripts: test === undefined ? {} : { test } }),
    ...files,
  });
}

const INSTALLED = {
  'node_modules/jest/bin/jest.js': '',
  'node_modules/jest/package.json': JSON.stringify({ name: 'jest', version: '29.7.0' }),
  'node_modules/vitest/vitest.mjs': '',
  'node_modules/mocha/bin/mocha.js': '',
};

describe('detectTestCommand', () => {
  test.each([
    ['vitest run', 'vitest'],
    ['vitest --coverage', 'vitest'],
    ['jest --coverage', 'jest'],
    ['cross-env NODE_ENV=test jest', 'jest'],
    ['mocha --recursive test', 'mocha'],
    ['node --test', 'node-test'],
    ['node --experimental-vm-modules --test test/', 'node-test'],
    ['node scripts/run-tests.js', 'jest'],
    ['react-scripts test', 'jest'],
    ['echo "Error: no test specified" && exit 1', 'jest'],
  ])('the test script %j runs %s', (script, kind) => {
    const repo = withScript(script, INSTALLED);
    const spec = detectTestCommand(repo, 'javascript', findDependencyFolders(repo));
    expect(spec).toMatchObject({ kind, command: null, source: 'detected' });
  });

  test("no package.json or no test script is Jest, which is aca's without one installed", () => {
    expect(detectTestCommand(makeRepo(), 'typescript', [])).toEqual({
      kind: 'jest',
      command: null,
      source: 'detected',
      label: "jest (aca's)",
    });
    expect(detectTestCommand(withScript(undefined), 'typescript', []).kind).toBe('jest');
  });

  test('labels say which runner runs', () => {
    const installed = withScript('jest', INSTALLED);
    const deps = findDependencyFolders(installed);
    expect(detectTestCommand(installed, 'typescript', deps).label).toBe('jest (node_modules/jest)');
    const vitest = withScript('vitest run', INSTALLED);
    expect(detectTestCommand(vitest, 'typescript', findDependencyFolders(vitest)).label).toBe(
      'vitest (node_modules/vitest)',
    );
    expect(detectTestCommand(withScript('mocha'), 'javascript', []).label).toBe(
      'mocha (not installed in node_modules)',
    );
    expect(detectTestCommand(withScript('node --test'), 'javascript', []).label).toBe('node --test');
    // Jest before 27 cannot report test by test to aca's reporter: aca's Jest runs instead.
    const old = withScript('jest', {
      'node_modules/jest/bin/jest.js': '',
      'node_modules/jest/package.json': JSON.stringify({ version: '26.6.3' }),
    });
    expect(detectTestCommand(old, 'javascript', findDependencyFolders(old)).label).toBe("jest (aca's)");
  });

  test('python runs pytest, with the venv interpreter when there is one', () => {
    expect(detectTestCommand(makeRepo(), 'python', [])).toEqual({
      kind: 'pytest',
      command: null,
      source: 'detected',
      label: 'pytest (/usr/bin/python3)',
    });
    const repo = repoWith({ 'venv/bin/python': '', 'venv/pyvenv.cfg': '' });
    expect(detectTestCommand(repo, 'python', findDependencyFolders(repo)).label).toBe(
      'pytest (venv/bin/python)',
    );
  });

  test('a package.json that is not a JSON object, a link or too large is a clear error', () => {
    expect(() => detectTestCommand(repoWith({ 'package.json': '{ "scripts": ' }), 'javascript', [])).toThrow(
      /package\.json is not valid JSON/,
    );
    expect(() => detectTestCommand(repoWith({ 'package.json': '{' }), 'javascript', [])).toThrow(
      UserInputError,
    );
    expect(() => detectTestCommand(repoWith({ 'package.json': '[1, 2]' }), 'javascript', [])).toThrow(
      /package\.json is not a JSON object/,
    );
    const linked = repoWith({ 'elsewhere.json': JSON.stringify({ scripts: { test: 'vitest' } }) });
    fs.symlinkSync(path.join(linked, 'elsewhere.json'), path.join(linked, 'package.json'));
    expect(() => detectTestCommand(linked, 'javascript', [])).toThrow(
      /package\.json path is a symbolic link/,
    );
    const huge = repoWith({ 'package.json': `{"description": "${'x'.repeat(9 * 1024 * 1024)}"}` });
    expect(() => detectTestCommand(huge, 'javascript', [])).toThrow(/over the limit/);
  });
});

describe('findDependencyFolders', () => {
  test('finds .venv, venv and node_modules that are real folders, never links or files', () => {
    const repo = repoWith({ 'venv/bin/python': '', 'node_modules/x/index.js': '', src: '' });
    const elsewhere = makeRepo();
    fs.symlinkSync(elsewhere, path.join(repo, '.venv'));
    expect(findDependencyFolders(repo)).toEqual<DependencyFolder[]>([
      { relative: 'venv', hostPath: path.join(repo, 'venv') },
      { relative: 'node_modules', hostPath: path.join(repo, 'node_modules') },
    ]);
    fs.writeFileSync(path.join(elsewhere, 'node_modules'), '');
    expect(findDependencyFolders(elsewhere)).toEqual([]);
  });
});
