import { parseTextToolCalls } from '../../src/llm/text-tool-calls';

const CODER_TOOLS = [
  'list_files',
  'read_file',
  'search_files',
  'create_file',
  'edit_file',
  'delete_file',
  'finish',
];
const parse = (content: string, repair = true) => parseTextToolCalls(content, CODER_TOOLS, { repair });

describe('tool calls written as text', () => {
  test('a bare JSON object with arguments', () => {
    expect(parse('{"name": "read_file", "arguments": {"path": "a.py"}}')).toEqual({
      calls: [{ name: 'read_file', arguments: '{"path":"a.py"}' }],
      rest: null,
    });
  });

  test('"parameters" instead of "arguments", inside a ```json fence, with prose around it', () => {
    const content = 'I will read it.\n```json\n{"name": "read_file", "parameters": {"path": "a.py"}}\n```\n';
    expect(parse(content)).toEqual({
      calls: [{ name: 'read_file', arguments: '{"path":"a.py"}' }],
      rest: 'I will read it.',
    });
  });

  test('several <tool_call> tags, arguments given as a JSON string', () => {
    const content =
      '<tool_call>\n{"name": "create_file", "arguments": {"path": "a.py", "content": "x = 1\\n"}}\n</tool_call>\n' +
      '<tool_call>{"name": "finish", "arguments": "{\\"summary\\": \\"done\\"}"}</tool_call>';
    expect(parse(content).calls).toEqual([
      { name: 'create_file', arguments: '{"path":"a.py","content":"x = 1\\n"}' },
      { name: 'finish', arguments: '{"summary": "done"}' },
    ]);
  });

  test('an array of calls and the {"function": {...}} nesting', () => {
    const content =
      '[{"name": "list_files", "arguments": {}}, {"type": "function", "function": {"name": "read_file", "arguments": {"path": "b.py"}}}]';
    expect(parse(content).calls.map((c) => c.name)).toEqual(['list_files', 'read_file']);
  });

  test('names the agent does not have stay plain content', () => {
    const content = '{"name": "run_shell", "arguments": {"command": "rm -rf /"}}';
    expect(parse(content)).toEqual({ calls: [], rest: content });
    // A Planner is not offered create_file.
    expect(
      parseTextToolCalls(
        '{"name": "create_file", "arguments": {"path": "a", "content": ""}}',
        ['list_files', 'submit_plan'],
        {
          repair: true,
        },
      ).calls,
    ).toEqual([]);
  });

  test('JSON that is not a call (extra keys, no name) and prose stay content', () => {
    expect(parse('{"name": "read_file", "arguments": {}, "command": "x"}').calls).toEqual([]);
    expect(parse('```json\n{"path": "a.py"}\n```').calls).toEqual([]);
    expect(parse('The answer is {"name": "read_file"} as you see.').calls).toEqual([]);
  });

  test('a cut tag is not a call; a complete one before it is', () => {
    const content =
      '<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>\n<tool_call>{"name": "create_file", "arguments": {"path": "b.py", "content": "def f';
    const parsed = parse(content, false);
    expect(parsed.calls).toEqual([{ name: 'read_file', arguments: '{"path":"a.py"}' }]);
    expect(parsed.rest).toContain('<tool_call>{"name": "create_file"');
  });

  test('the wrapper is repaired only when written whole and repair is on', () => {
    const loose = "{'name': 'read_file', 'arguments': {'path': 'a.py'},}";
    expect(parse(loose).calls).toEqual([{ name: 'read_file', arguments: '{"path":"a.py"}' }]);
    expect(parse(loose, false).calls).toEqual([]);
  });
});
