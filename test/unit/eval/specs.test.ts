/** `aca eval --specs FILE`: which repository environments the specs file may give (exit 2 otherwise). */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readSpecs } from '../../../src/eval/specs';
import { UserInputError } from '../../../src/shared/errors';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-specs-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function specsFile(value: unknown): string {
  const file = path.join(dir, `specs-${Math.random().toString(16).slice(2)}.json`);
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

describe('--specs FILE', () => {
  test('each repository its test command, setup command and variables', () => {
    const specs = readSpecs(
      specsFile({
        'pallets/itsdangerous': { env: { PYTHONPATH: 'src', DJANGO_SETTINGS_MODULE: 'x.settings' } },
        'o/n': { testCommand: 'pytest -q', setupCommand: 'make build' },
      }),
    );
    expect(specs.get('pallets/itsdangerous')).toEqual({
      testCommand: null,
      setupCommand: null,
      env: { PYTHONPATH: 'src', DJANGO_SETTINGS_MODULE: 'x.settings' },
    });
    expect(specs.get('o/n')).toEqual({ testCommand: 'pytest -q', setupCommand: 'make build', env: {} });
  });

  test.each([
    ['not JSON', '{', /cannot read/],
    ['a list', '[]', /not a JSON object/],
    ['a key that is not owner/name', { itsdangerous: {} }, /not owner\/name/],
    ['an unknown field', { 'o/n': { testCmd: 'x' } }, /allowed: testCommand, setupCommand, env/],
    ['a command over two lines', { 'o/n': { setupCommand: 'a\nb' } }, /one line/],
    ['LD_PRELOAD', { 'o/n': { env: { LD_PRELOAD: './evil.so' } } }, /LD_PRELOAD is reserved/],
    ['PATH', { 'o/n': { env: { PATH: '/tmp' } } }, /PATH is set by aca's sandbox/],
    ['ACA_JUNIT_XML', { 'o/n': { env: { ACA_JUNIT_XML: '/tmp/x' } } }, /reserved/],
    ['PYTHONSTARTUP', { 'o/n': { env: { PYTHONSTARTUP: 'evil.py' } } }, /only PYTHONPATH/],
    [
      'a PYTHONPATH outside the repository',
      { 'o/n': { env: { PYTHONPATH: 'src:/etc' } } },
      /"\/etc" is not a folder inside/,
    ],
    [
      'a PYTHONPATH above the repository',
      { 'o/n': { env: { PYTHONPATH: '../other' } } },
      /not a folder inside/,
    ],
    ['a value that is not a string', { 'o/n': { env: { X: 1 } } }, /env\.X/],
  ])('refuses %s (exit 2)', (_name, value, message) => {
    const file = specsFile(value);
    expect(() => readSpecs(file)).toThrow(UserInputError);
    expect(() => readSpecs(file)).toThrow(message);
  });
});
