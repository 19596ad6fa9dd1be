/**
 * An MCP tool's answer is untrusted text: text joined, other content described, terminal escapes
 * removed, hidden characters made visible, and the whole clipped with the cut said in the middle.
 */
import { mcpToolAnswer, MAX_MCP_ANSWER_CHARS } from '../../../src/mcp';
import { clipMiddle } from '../../../src/shared/clip-text';

test('text items are joined; an image, audio and resources are described, not passed on', () => {
  const png = Buffer.alloc(300).toString('base64');
  const answer = mcpToolAnswer({
    content: [
      { type: 'text', text: 'first' },
      { type: 'image', data: png, mimeType: 'image/png' },
      { type: 'audio', data: Buffer.alloc(10).toString('base64'), mimeType: 'audio/wav' },
      { type: 'resource_link', name: 'spec', uri: 'file:///spec.md' },
      { type: 'resource', resource: { uri: 'mem://a', text: 'inline' } },
      { type: 'resource', resource: { uri: 'mem://b', blob: Buffer.alloc(7).toString('base64') } },
      { type: 'hologram' },
    ],
  });
  expect(answer).toEqual({
    ok: true,
    content: [
      'first',
      '[image, image/png, 300 bytes]',
      '[audio, audio/wav, 10 bytes]',
      '[resource link: spec file:///spec.md]',
      '[resource mem://a]\ninline',
      '[resource mem://b, 7 bytes]',
      '[content of type "hologram"]',
    ].join('\n'),
  });
  expect(JSON.stringify(answer)).not.toContain(png.slice(0, 40));
});

test('structured content stands in for missing text; isError is an error answer', () => {
  expect(mcpToolAnswer({ content: [], structuredContent: { n: 3 } })).toEqual({
    ok: true,
    content: '{"n":3}',
  });
  expect(mcpToolAnswer({ isError: true, content: [{ type: 'text', text: 'no such key' }] })).toEqual({
    ok: false,
    error: 'the tool reported an error: no such key',
  });
  expect(mcpToolAnswer({ isError: true, content: [] })).toEqual({
    ok: false,
    error: 'the tool reported an error: (no message)',
  });
  expect(mcpToolAnswer('not an object')).toEqual({ ok: true, content: '' });
});

test('terminal escapes are removed and every other hidden character shows as an escape', () => {
  const text =
    'a\u001b[31mRED\u001b[0m b\u001b]52;c;cHduZWQ=\u0007 c\u001b]0;title\u001b\\ d\u009b2J e\u0007 f\u202e g\r\nh\ri\u0000';
  const answer = mcpToolAnswer({ content: [{ type: 'text', text }] });
  expect(answer).toEqual({ ok: true, content: 'aRED b c d e\\x07 f\\u202e g\nh\ni\\x00' });
});

test('a huge answer is clipped, start and end kept, the cut counted', () => {
  const text = 'x'.repeat(100_000) + 'END';
  const answer = mcpToolAnswer({ content: [{ type: 'text', text: 'START' + text }] });
  if (!answer.ok) throw new Error(answer.error);
  const content = String(answer.content);
  expect(content.length).toBeLessThanOrEqual(MAX_MCP_ANSWER_CHARS);
  expect(content.startsWith('START')).toBe(true);
  expect(content.endsWith('END')).toBe(true);
  expect(content).toMatch(/\[… \d+ characters cut …\]/);
});

test('clipMiddle counts exactly what it cut', () => {
  expect(clipMiddle('short', 10)).toBe('short');
  const clipped = clipMiddle('a'.repeat(50) + 'b'.repeat(50), 60);
  expect(clipped.length).toBeLessThanOrEqual(60);
  const cut = Number(/(\d+) characters cut/.exec(clipped)![1]);
  expect(clipped.replace(/\n\[… \d+ characters cut …\]\n/, '').length + cut).toBe(100);
});

// JSON.parse takes any depth but JSON.stringify recurses: a server's answer nested deep enough
// would throw in the worker, and the call be retried (and the tool called again) each time.
test('structured content too deeply nested to write out is described, not thrown on', () => {
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let depth = 0; depth < 200_000; depth++) deep = { a: deep };
  expect(mcpToolAnswer({ content: [], structuredContent: deep })).toEqual({
    ok: true,
    content: '[structured content that cannot be written out as JSON]',
  });
});
