import { parseModelJson, scanJsonShape } from '../../../src/shared/model-json';
import { parseToolArguments } from '../../../src/tools/registry';

describe('parsing JSON a model wrote', () => {
  test('valid JSON is parsed as is, without a repaired text', () => {
    expect(parseModelJson('{"path": "a.py"}', { repair: true })).toEqual({
      ok: true,
      value: { path: 'a.py' },
    });
  });

  test.each([
    ['a trailing comma', '{"path": "a.py", "content": "x = 1\\n",}'],
    ['single quotes', "{'path': 'a.py', 'content': 'x = 1\\n'}"],
    ['unquoted keys', '{path: "a.py", content: "x = 1\\n"}'],
    ['a missing comma', '{"path": "a.py" "content": "x = 1\\n"}'],
  ])('%s written whole is repaired', (_what, text) => {
    const parsed = parseModelJson(text, { repair: true });
    expect(parsed).toMatchObject({ ok: true, value: { path: 'a.py', content: 'x = 1\n' } });
    expect(parsed.ok && JSON.parse(parsed.repaired!)).toEqual({ path: 'a.py', content: 'x = 1\n' });
  });

  test('nothing is repaired when repair is off (a cut answer)', () => {
    const parsed = parseModelJson('{"path": "a.py",}', { repair: false });
    expect(parsed).toMatchObject({ ok: false, error: expect.stringMatching(/not valid JSON/) });
  });

  test.each([
    [
      'ends inside a string',
      '{"path": "big.py", "content": "def f():\\n    return 1\\n\\ndef g',
      /inside a string/,
    ],
    [
      'ends before its closing brace',
      '{"path": "big.py", "content": "def f():\\n    return 1\\n"',
      /brackets/,
    ],
    ['ends inside a nested list', '{"summary": "s", "steps": ["a", "b"', /brackets/],
    ['closes with the wrong bracket', '{"steps": ["a", "b"}', /brackets/],
  ])('text that %s is never repaired', (_what, text, why) => {
    const parsed = parseModelJson(text, { repair: true });
    expect(parsed).toEqual({ ok: false, error: expect.stringMatching(why) });
  });

  test('the shape scan ignores brackets and quotes inside strings', () => {
    expect(scanJsonShape('{"a": "}{][", "b": "it\'s \\" fine"}')).toBe('whole');
    expect(scanJsonShape('{"a": "\\"')).toBe('it ends inside a string');
  });
});

describe('tool arguments through the registry', () => {
  test('a cut create_file is refused, never shortened into a smaller file', () => {
    const cut = '{"path": "big.py", "content": "def first():\\n    return 1\\n\\ndef second():\\n    ret';
    const parsed = parseToolArguments('create_file', cut, { repair: true });
    expect(parsed).toMatchObject({ ok: false, kind: 'json', error: expect.stringMatching(/not valid JSON/) });
  });

  test('a repaired call must still pass the schema: unknown keys are refused', () => {
    const parsed = parseToolArguments('create_file', "{'path': 'a.py', 'content': 'x', 'mode': '0777',}", {
      repair: true,
    });
    expect(parsed).toMatchObject({ ok: false, kind: 'schema', error: expect.stringMatching(/mode/) });
  });

  test('a repaired call that passes the schema gives its args and the repaired JSON', () => {
    const parsed = parseToolArguments('create_file', "{'path': 'a.py', 'content': 'x = 1\\n',}", {
      repair: true,
    });
    expect(parsed).toEqual({
      ok: true,
      args: { path: 'a.py', content: 'x = 1\n' },
      repaired: expect.any(String),
    });
  });

  test('without the repair option (how an executed call is parsed) invalid JSON stays refused', () => {
    expect(parseToolArguments('create_file', "{'path': 'a.py', 'content': 'x'}")).toMatchObject({
      ok: false,
    });
  });
});
