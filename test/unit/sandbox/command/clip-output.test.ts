/**
 * An agent command's output kept as head and tail: whole while it fits, else its two ends with
 * the bytes between counted, in bounded memory however much arrives and however it is chunked.
 */
import { clipText, cutMarker, HeadTailCapture } from '../../../../src/sandbox';

const captured = (head: number, tail: number, ...chunks: string[]): HeadTailCapture => {
  const capture = new HeadTailCapture(head, tail);
  for (const chunk of chunks) capture.push(Buffer.from(chunk));
  return capture;
};

describe('HeadTailCapture', () => {
  test('output that fits is kept whole, with no marker', () => {
    expect(captured(4, 4, 'abc', 'def', 'gh').clipped()).toBe('abcdefgh');
    expect(captured(4, 4).clipped()).toBe('');
  });

  test('longer output keeps its first and last bytes and counts what was cut', () => {
    const capture = captured(4, 3, 'abcdef', 'ghijkl', 'mnop');
    expect(capture.totalBytes).toBe(16);
    expect(capture.clipped()).toBe(`abcd\n${cutMarker(9)}\nnop`);
  });

  test('the same text arrives the same whatever the chunking', () => {
    const text = Array.from({ length: 300 }, (_, i) => `line ${i}\n`).join('');
    const whole = captured(100, 200, text).clipped();
    const bytewise = captured(100, 200, ...text.split('')).clipped();
    const uneven = captured(100, 200, text.slice(0, 7), text.slice(7, 1500), text.slice(1500)).clipped();
    expect(bytewise).toBe(whole);
    expect(uneven).toBe(whole);
    expect(whole.startsWith('line 0\n')).toBe(true);
    expect(whole.endsWith('line 299\n')).toBe(true);
    expect(whole).toContain(cutMarker(Buffer.byteLength(text) - 300));
  });

  test('a smaller clip of what was kept counts every byte not shown', () => {
    const text = 'x'.repeat(50) + 'y'.repeat(50);
    const capture = captured(40, 40, text);
    expect(capture.clipped(10, 5)).toBe(`${'x'.repeat(10)}\n${cutMarker(85)}\n${'y'.repeat(5)}`);
    // When nothing was dropped, a clip larger than either end still takes the stream's real bytes.
    expect(captured(40, 40, 'a'.repeat(30)).clipped(10, 5)).toBe(
      `${'a'.repeat(10)}\n${cutMarker(15)}\n${'a'.repeat(5)}`,
    );
  });

  test('memory stays bounded under a flood', () => {
    const capture = new HeadTailCapture(1024, 1024);
    const chunk = Buffer.alloc(64 * 1024, 'z');
    for (let i = 0; i < 2000; i++) capture.push(chunk);
    expect(capture.totalBytes).toBe(2000 * 64 * 1024);
    const text = capture.clipped();
    expect(text).toContain(cutMarker(2000 * 64 * 1024 - 2048));
    expect(text.length).toBeLessThan(2048 + 100);
  });

  test('a cut inside a multi-byte character shows a replacement character, not an error', () => {
    const text = 'é'.repeat(10);
    expect(captured(3, 3, text).clipped()).toMatch(/^é\uFFFD\n\.\.\. 14 bytes cut \.\.\.\n\uFFFDé$/);
  });

  test('sizes must be whole numbers', () => {
    expect(() => new HeadTailCapture(-1, 2)).toThrow('whole numbers');
    expect(() => new HeadTailCapture(1.5, 2)).toThrow('whole numbers');
  });
});

describe('clipText', () => {
  test('joins head and tail on lines of their own around the marker', () => {
    expect(clipText('abc', 'xyz', 10)).toBe(`abc\n${cutMarker(10)}\nxyz`);
    expect(clipText('abc\n', 'xyz', 10)).toBe(`abc\n${cutMarker(10)}\nxyz`);
    expect(clipText('abc', 'xyz', 0)).toBe('abcxyz');
    expect(cutMarker(1234)).toBe('... 1234 bytes cut ...');
  });
});
