/**
 * A server's tool listing is the server's word: every page read (up to a bound), the allow list
 * applied, descriptions made printable and clipped, schemas that are not object schemas or are
 * too large replaced, a tool named twice offered once, and the whole listing bounded.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { FUNCTION_NAME } from '../../../src/mcp';
import { listedTools } from '../../../src/mcp/listed-tools';

type Tool = { name: string; description?: unknown; inputSchema?: unknown };

/** A client whose server lists `pages`, one per request, following the cursor. */
function listing(pages: Tool[][]): Pick<Client, 'listTools'> & { requests: number } {
  const client = {
    requests: 0,
    listTools: (params?: { cursor?: string }) => {
      client.requests += 1;
      const index = params?.cursor ? Number(params.cursor) : 0;
      const next = index + 1 < pages.length ? { nextCursor: String(index + 1) } : {};
      return Promise.resolve({ tools: pages[index]!, ...next });
    },
  };
  return client as unknown as Pick<Client, 'listTools'> & { requests: number };
}

const object = { type: 'object', properties: { q: { type: 'string' } } };

test('every page is read and the allow list applied', async () => {
  const client = listing([
    [{ name: 'a', inputSchema: object }],
    [{ name: 'b', inputSchema: object }],
    [{ name: 'c', inputSchema: object }],
  ]);
  const tools = await listedTools(client, { name: 's', tools: ['a', 'c', 'missing'] }, 1000);
  expect(client.requests).toBe(3);
  expect(tools.map((t) => [t.functionName, t.tool])).toEqual([
    ['mcp__s__a', 'a'],
    ['mcp__s__c', 'c'],
  ]);
});

test('a listing that never ends is read only so far', async () => {
  const endless = {
    requests: 0,
    listTools() {
      endless.requests += 1;
      return Promise.resolve({
        tools: [{ name: `t${endless.requests}`, inputSchema: object }],
        nextCursor: 'more',
      });
    },
  };
  const tools = await listedTools(
    endless as unknown as Pick<Client, 'listTools'>,
    { name: 's', tools: null },
    1000,
  );
  expect(endless.requests).toBe(16);
  expect(tools).toHaveLength(16);
});

test('hostile descriptions, schemas and names are made safe to offer', async () => {
  const tools = await listedTools(
    listing([
      [
        { name: 'escapes', description: 'Reads.\u001b]0;owned\u0007\u202e hidden', inputSchema: object },
        { name: 'long', description: 'd'.repeat(10_000), inputSchema: { type: 'array' } },
        {
          name: 'huge',
          inputSchema: { type: 'object', properties: { p: { description: 'x'.repeat(40_000) } } },
        },
        { name: 'escapes', description: 'a second escapes', inputSchema: object },
        { name: 'bad name/../x', inputSchema: 'not a schema' },
        { name: '', inputSchema: object },
      ],
    ]),
    { name: 's', tools: null },
    1000,
  );
  expect(tools.map((t) => t.tool)).toEqual(['escapes', 'long', 'huge', 'bad name/../x']);
  expect(tools[0]!.description).toBe('Reads.\\u202e hidden');
  expect(tools[1]!.description.length).toBeLessThanOrEqual(2_000);
  expect(tools[1]!.inputSchema).toEqual({ type: 'object' });
  expect(tools[2]!.inputSchema).toEqual({ type: 'object' });
  expect(tools[3]!.inputSchema).toEqual({ type: 'object' });
  for (const tool of tools) expect(tool.functionName).toMatch(FUNCTION_NAME);
});

test("one server's listing adds a bounded amount to every prompt", async () => {
  const big = (i: number): Tool => ({
    name: `t${i}`,
    description: 'd'.repeat(1_900),
    inputSchema: { type: 'object', properties: { p: { description: 'x'.repeat(20_000) } } },
  });
  const tools = await listedTools(
    listing([Array.from({ length: 100 }, (_, i) => big(i))]),
    { name: 's', tools: null },
    1000,
  );
  expect(tools.length).toBeGreaterThan(0);
  expect(tools.length).toBeLessThan(100);
  const chars = tools.reduce(
    (sum, t) => sum + t.description.length + JSON.stringify(t.inputSchema).length,
    0,
  );
  expect(chars).toBeLessThanOrEqual(200_000);
  expect(tools.map((t) => t.tool)).toEqual(tools.map((_, i) => `t${i}`));
});
