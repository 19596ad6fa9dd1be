/** MCP tools' function names: within the chat API's rule, never two alike, the server kept whole. */
import { FUNCTION_NAME, mcpServerOfFunction, toolFunctionNames } from '../../../src/mcp';

test('a fitting tool name is kept as it is, and the server is found again from the name', () => {
  const names = toolFunctionNames('search', ['lookup', 'slow_sum']);
  expect([...names.toolOf]).toEqual([
    ['mcp__search__lookup', 'lookup'],
    ['mcp__search__slow_sum', 'slow_sum'],
  ]);
  expect(names.functionOf.get('slow_sum')).toBe('mcp__search__slow_sum');
  expect(mcpServerOfFunction('mcp__search__slow_sum')).toBe('search');
  expect(mcpServerOfFunction('mcp__my_srv-2__a__b')).toBe('my_srv-2');
});

test.each(['mcp__', 'mcp____x', 'read_file', 'mcp_x__y'])('%s names no MCP server', (name) => {
  expect(mcpServerOfFunction(name)).toBeNull();
});

test('names outside the rule, long names and names that would collide all get names of their own', () => {
  const server = 'a'.repeat(32);
  const tools = [
    'get.file',
    'get_file',
    'get file',
    'ünïcode',
    '',
    'x'.repeat(200),
    'x'.repeat(199) + 'y',
    '\u001b[31mred',
    '../../etc',
  ];
  const names = toolFunctionNames(server, tools);
  const all = [...names.toolOf.keys()];
  expect(all).toHaveLength(tools.length);
  expect(new Set(all).size).toBe(tools.length);
  for (const name of all) {
    expect(name).toMatch(FUNCTION_NAME);
    expect(mcpServerOfFunction(name)).toBe(server);
  }
  for (const tool of tools) expect(names.toolOf.get(names.functionOf.get(tool)!)).toBe(tool);
  // A name that did not need changing is kept, whatever came before it.
  expect(names.functionOf.get('get_file')).toBe(`mcp__${server}__get_file`);
});

test('a server that names a tool as another one was fitted to still gets two names', () => {
  const first = toolFunctionNames('s', ['a.b']).functionOf.get('a.b')!;
  const forged = first.slice('mcp__s__'.length);
  const names = toolFunctionNames('s', ['a.b', forged]);
  expect(names.functionOf.get('a.b')).toBe(first);
  expect(names.functionOf.get(forged)).not.toBe(first);
  expect(names.functionOf.get(forged)).toMatch(FUNCTION_NAME);
});

test('the same listing always gives the same names', () => {
  const tools = ['a.b', 'c'.repeat(90), 'd'];
  expect([...toolFunctionNames('s', tools).toolOf]).toEqual([...toolFunctionNames('s', tools).toolOf]);
});
