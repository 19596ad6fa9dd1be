/**
 * A stdio MCP server for the tests, built with the SDK's McpServer. Two tools:
 *
 * - `lookup` answers at once: `{key}` -> `value of <key>`. Keys with a meaning: `env` answers the
 *   names of the server's environment variables (what a worker lets a server see); `escapes`
 *   answers text with terminal escapes; `big` answers 100 000 characters; `image` answers an
 *   image; `fail` answers with isError; `huge` answers 5 MiB of text, one message over what aca
 *   reads; `flood` writes 100 MB to stdout without a line end (a hostile server) and never answers.
 * - `slow_sum` answers `{a, b, delay_ms}` with a + b after delay_ms.
 *
 * Misbehaviour, chosen by the environment the configuration gives it:
 * - MCP_TEST_CRASH_ONCE=<file>: the first slow_sum (while <file> does not exist) creates <file>
 *   and exits mid-call; later ones answer.
 * - MCP_TEST_EXIT_AT_START=<code>: exits at once, writing a reason to stderr (a server that cannot
 *   start).
 *
 * MCP_TEST_CALL_LOG=<file>: each call appends a line `<tool> <arguments as JSON>` to <file>, so a
 * test can count the calls that reached the server.
 */
import * as fs from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

if (process.env.MCP_TEST_EXIT_AT_START) {
  process.stderr.write('mcp-test-server: told to fail at start\n');
  process.exit(Number(process.env.MCP_TEST_EXIT_AT_START));
}

const server = new McpServer({ name: 'aca-test', version: '1.0.0' });
const noteCall = (tool, args) => {
  if (process.env.MCP_TEST_CALL_LOG)
    fs.appendFileSync(process.env.MCP_TEST_CALL_LOG, `${tool} ${JSON.stringify(args)}\n`);
};
const text = (value) => ({ content: [{ type: 'text', text: value }] });

server.registerTool(
  'lookup',
  { description: 'Looks a key up and answers its value.', inputSchema: { key: z.string() } },
  async ({ key }) => {
    noteCall('lookup', { key });
    if (key === 'env') return text(Object.keys(process.env).sort().join(','));
    if (key === 'escapes')
      return text('red \u001b[31mRED\u001b[0m title \u001b]0;pwned\u0007 bell \u0007 done\r\nnext');
    if (key === 'big') return text('x'.repeat(50_000) + 'y'.repeat(50_000));
    if (key === 'image') {
      return {
        content: [{ type: 'image', data: Buffer.alloc(300).toString('base64'), mimeType: 'image/png' }],
      };
    }
    if (key === 'fail') return { isError: true, content: [{ type: 'text', text: 'no such key' }] };
    if (key === 'huge') return text('h'.repeat(5 * 1024 * 1024));
    if (key === 'flood') {
      const chunk = Buffer.alloc(64 * 1024, 'f');
      for (let sent = 0; sent < 100 * 1024 * 1024; sent += chunk.length) {
        if (!process.stdout.write(chunk))
          await new Promise((resolve) => process.stdout.once('drain', resolve));
      }
      await new Promise(() => undefined);
    }
    return text(`value of ${key}`);
  },
);

server.registerTool(
  'slow_sum',
  {
    description: 'Adds two numbers after a wait.',
    inputSchema: { a: z.number(), b: z.number(), delay_ms: z.number().int().min(0) },
  },
  async ({ a, b, delay_ms }) => {
    noteCall('slow_sum', { a, b, delay_ms });
    const marker = process.env.MCP_TEST_CRASH_ONCE;
    if (marker && !fs.existsSync(marker)) {
      fs.writeFileSync(marker, String(process.pid));
      setTimeout(() => process.exit(7), 50);
      await new Promise(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, delay_ms));
    return text(String(a + b));
  },
);

await server.connect(new StdioServerTransport());
// The client closing stdin is the end, as for a real server; without this it waits to be killed.
process.stdin.on('end', () => process.exit(0));
