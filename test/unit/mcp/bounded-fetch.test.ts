/**
 * The fetch an HTTP MCP server is reached with, on made-up responses: a JSON body is bounded as a
 * whole, an event stream event by event (only a blank line ends an event, whichever line ends it
 * uses), an error's body is cut quietly, and an answer too large gives up the call it belongs to
 * or, belonging to none, is reported as stray.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallGuard, guardedBy, McpAnswerTooLargeError } from '../../../src/mcp/answer-guard';
import { boundedFetch } from '../../../src/mcp/bounded-fetch';

const LIMIT = 100;

/** A fetch that answers `body` (sent in chunks of `chunkBytes`) with `contentType` and `status`. */
function answering(body: string, contentType: string, status = 200, chunkBytes = 7): FetchLike {
  return () => {
    const bytes = Buffer.from(body);
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(new Uint8Array(bytes.subarray(at, at + chunkBytes)));
        at += chunkBytes;
      },
    });
    return Promise.resolve(new Response(stream, { status, headers: { 'content-type': contentType } }));
  };
}

function fetchOf(base: FetchLike, stray: McpAnswerTooLargeError[] = []): FetchLike {
  return boundedFetch({ maxMessageBytes: LIMIT, base, onStrayOversize: (error) => stray.push(error) });
}

const read = async (fetch: FetchLike) => (await fetch('http://server/mcp')).text();

describe('a body that is not an event stream is bounded as a whole', () => {
  test('up to the bound it is read as sent', async () => {
    const body = 'j'.repeat(LIMIT);
    expect(await read(fetchOf(answering(body, 'application/json')))).toBe(body);
  });

  test.each(['application/json', 'text/plain', 'text/event-stream-not', ''])(
    'one byte over (%s) breaks it off and is stray outside a call',
    async (type) => {
      const stray: McpAnswerTooLargeError[] = [];
      await expect(read(fetchOf(answering('j'.repeat(LIMIT + 1), type), stray))).rejects.toThrow();
      expect(stray).toHaveLength(1);
      expect(stray[0]!.message).toBe('a message over 100 bytes came from the server, more than aca reads');
    },
  );

  test("in a call's context it gives that call up, and nothing is stray", async () => {
    const stray: McpAnswerTooLargeError[] = [];
    const guard = new CallGuard();
    const fetch = fetchOf(answering('j'.repeat(LIMIT * 3), 'application/json'), stray);
    await expect(guardedBy(guard, () => read(fetch))).rejects.toThrow();
    expect(guard.tooLarge).toBeInstanceOf(McpAnswerTooLargeError);
    expect(guard.signal.aborted).toBe(true);
    expect(stray).toEqual([]);
    // A call given up opens no stream to read the answer again; its POSTs (a cancellation) still go.
    await expect(guardedBy(guard, () => fetch('http://server/mcp'))).rejects.toBe(guard.tooLarge);
    await expect(
      guardedBy(guard, () => fetch('http://server/mcp', { method: 'POST' })),
    ).resolves.toBeDefined();
  });
});

describe('an event stream is bounded event by event', () => {
  const event = (bytes: number) => `data: ${'e'.repeat(bytes - 'data: '.length)}`;

  test.each([
    ['LF', '\n\n'],
    ['CRLF', '\r\n\r\n'],
    ['CR', '\r\r'],
    ['mixed', '\r\n\n'],
  ])('events each within the bound, ended by blank lines (%s), pass however many', async (_name, end) => {
    const body = Array.from({ length: 20 }, () => `${event(LIMIT - 2)}${end}`).join('');
    const type = 'Text/Event-Stream; charset=utf-8';
    expect(await read(fetchOf(answering(body, type)))).toBe(body);
  });

  test.each([
    ['one long line', event(LIMIT + 1)],
    ['many lines ended by LF', `${event(40)}\n${event(40)}\n${event(40)}\n`],
    ['many lines ended by CRLF', `${event(40)}\r\n${event(40)}\r\n${event(40)}\r\n`],
    ['many lines ended by CR', `${event(40)}\r${event(40)}\r${event(40)}\r`],
    ['comment lines', `: ${'c'.repeat(60)}\n: ${'c'.repeat(60)}\n`],
  ])('an event over the bound (%s) is broken off', async (_name, body) => {
    const stray: McpAnswerTooLargeError[] = [];
    await expect(
      read(fetchOf(answering(`${event(10)}\n\n${body}`, 'text/event-stream'), stray)),
    ).rejects.toThrow();
    expect(stray).toHaveLength(1);
  });
});

test("an error's body is cut at 64 KiB, quietly", async () => {
  const text = await read(fetchOf(answering('e'.repeat(200 * 1024), 'text/plain', 500, 4096)));
  expect(text).toBe('e'.repeat(64 * 1024));
});

test('a response without a body is passed on as it is', async () => {
  const empty: FetchLike = () => Promise.resolve(new Response(null, { status: 202 }));
  const response = await fetchOf(empty)('http://server/mcp');
  expect(response.status).toBe(202);
  expect(response.body).toBeNull();
});
