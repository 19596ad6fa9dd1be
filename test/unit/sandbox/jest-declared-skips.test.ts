/**
 * Which skipped Jest tests an acceptance file declares itself (the honest skips). The `.skip` and
 * `.only` calls below are source text this reads with the TypeScript parser, never run here.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { declaredJestSkips } from '../../../src/sandbox';

/** The honest-skip predicate of one acceptance file, asked about `file::fullName` case names. */
async function skipsOf(text: string, file = 'a.test.ts'): Promise<(fullName: string) => boolean> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-declared-skips-'));
  try {
    fs.writeFileSync(path.join(dir, file), text);
    const honest = await declaredJestSkips(dir, [file]);
    return (fullName) => honest(`${file}::${fullName}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('skips an acceptance file declares itself', () => {
  test('skip, xit, xtest, todo and skipped describes count; running tests do not', async () => {
    const honest = await skipsOf(`
describe('outer', () => {
  it('runs', () => {});
  it.skip('skipped', () => {});
  xit('x skipped', () => {});
  xtest('xtest skipped', () => {});
  test.todo('to do');
  test.concurrent.skip('concurrent skipped', async () => {});
  describe.skip('off', () => {
    it('inside', () => {});
  });
  xdescribe('also off', () => {
    describe('deeper', () => {
      test('deep', () => {});
    });
  });
  describe('on', () => {
    it('inner runs', () => {});
  });
});
`);
    for (const name of [
      'outer skipped',
      'outer x skipped',
      'outer xtest skipped',
      'outer to do',
      'outer concurrent skipped',
      'outer off inside',
      'outer also off deeper deep',
    ])
      expect([name, honest(name)]).toEqual([name, true]);
    for (const name of ['outer runs', 'outer on inner runs', 'outer skipped too', 'skipped'])
      expect([name, honest(name)]).toEqual([name, false]);
  });

  test('each titles match their formatted names, other titles only themselves', async () => {
    const honest = await skipsOf(`
it.skip.each([[1, 2]])('adds %i and %d', () => {});
test.skip.each\`
  a | b
  \${1} | \${2}
\`('$a plus $b', () => {});
const name = 'computed';
it.skip(\`template \${name} title\`, () => {});
it.each([[1]])('runs %i', () => {});
`);
    expect(honest('adds 1 and 2')).toBe(true);
    expect(honest('1 plus 2')).toBe(true);
    expect(honest('template computed title')).toBe(true);
    expect(honest('template title')).toBe(false);
    expect(honest('runs 1')).toBe(false);
    // A title held in a variable is only known at run time: it stands for any name in its place.
    const computed = await skipsOf("const name = 'x';\nit.skip(name, () => {});\nit('runs', () => {});\n");
    expect(computed('runs')).toBe(true);
  });

  test('a .only leaves every test outside it skippable, and none inside', async () => {
    const honest = await skipsOf(`
import { describe as d, it, test } from '@jest/globals';
d('focus', () => {
  it.only('chosen', () => {});
  it('left out', () => {});
});
d.only('block', () => {
  test('inside only', () => {});
});
`);
    expect(honest('focus chosen')).toBe(false);
    expect(honest('block inside only')).toBe(false);
    expect(honest('focus left out')).toBe(true);
  });

  test('a file without skips or focus declares none; another file is not asked', async () => {
    const honest = await skipsOf(`
import * as g from '@jest/globals';
g.describe('plain', () => {
  g.it('runs', () => {});
});
`);
    expect(honest('plain runs')).toBe(false);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-declared-skips-'));
    fs.writeFileSync(path.join(dir, 'b.test.ts'), "it.skip('off', () => {});\n");
    const other = await declaredJestSkips(dir, ['b.test.ts']);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(other('b.test.ts::off')).toBe(true);
    expect(other('a.test.ts::off')).toBe(false);
    expect(other('off')).toBe(false);
  });
});
