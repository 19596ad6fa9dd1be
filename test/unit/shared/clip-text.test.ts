import { clipEnd, clipStart } from '../../../src/shared/clip-text';

describe('clipping text', () => {
  const text = 'abcdefghij'.repeat(100);

  test('never longer than the bound, whole when it fits', () => {
    for (const max of [0, 1, 5, 30, 219, 220, 500, 999, 1000, 2000]) {
      expect(clipEnd(text, max).length).toBeLessThanOrEqual(max);
      expect(clipStart(text, max).length).toBeLessThanOrEqual(max);
    }
    expect(clipEnd(text, 1000)).toBe(text);
    expect(clipStart(text, 1000)).toBe(text);
  });

  test('keeps the start or the end, saying how much was cut where there is room', () => {
    expect(clipEnd(text, 500)).toMatch(/^abcdefghij.*… \[500 more characters\]$/);
    expect(clipStart(text, 500)).toMatch(/^\[500 characters cut\] .*abcdefghij$/);
    // A narrow table cell just ends in an ellipsis.
    expect(clipEnd(text, 12)).toBe('abcdefghija…');
    expect(clipStart(text, 12)).toBe('ijabcdefghij');
  });
});
