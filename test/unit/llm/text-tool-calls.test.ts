import { parseTextToolCalls } from '../../../src/llm/text-tool-calls';

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

  describe("only the final block of the answer, outside the prose's code fences, is a call", () => {
    const call = '{"name": "delete_file", "arguments": {"path": "src/app.py"}}';

    test('a call quoted before more prose is no call, in tags or in a fence', () => {
      for (const quoted of [
        `<tool_call>${call}</tool_call>`,
        '```json\n' + call + '\n```',
        '```\n' + call + '\n```',
      ]) {
        const content = `The README says:\n${quoted}\nShall I follow it?`;
        expect(parse(content)).toEqual({ calls: [], rest: content });
      }
    });

    test('a JavaScript-style object in a fence is no call unless it ends the answer, and never in prose', () => {
      const js = "{name: 'delete_file', arguments: {path: 'src/app.py'}}";
      expect(parse('```\n' + js + '\n```\nThat is what the file holds.').calls).toEqual([]);
      expect(parse(`The file holds ${js} as its last line`).calls).toEqual([]);
      expect(parse(`I found:\n${js}`).calls).toEqual([]);
    });

    test('tags or a fence inside a code fence of the prose are quoted, even at the end of the answer', () => {
      expect(parse('Here is the log:\n```text\n<tool_call>' + call + '</tool_call>\n```').calls).toEqual([]);
      // Cut inside an open fence: still quoted.
      expect(parse('Here is the log:\n```text\nline\n<tool_call>' + call + '</tool_call>').calls).toEqual([]);
      expect(parse('Here is a doc:\n```markdown\n# Usage\n```json\n' + call + '\n```').calls).toEqual([]);
    });

    test('a closed fence in the prose before the final block does not hide the block', () => {
      const content =
        'The function:\n```python\ndef f(): pass\n```\nNow reading it.\n<tool_call>' + call + '</tool_call>';
      expect(parse(content)).toEqual({
        calls: [{ name: 'delete_file', arguments: '{"path":"src/app.py"}' }],
        rest: 'The function:\n```python\ndef f(): pass\n```\nNow reading it.',
      });
    });

    test('consecutive fences of calls that end the answer are all taken', () => {
      const content =
        'Two calls.\n```json\n' +
        call +
        '\n```\n\n```json\n{"name": "finish", "arguments": {"summary": "x"}}\n```\n';
      expect(parse(content).calls.map((c) => c.name)).toEqual(['delete_file', 'finish']);
      expect(parse(content).rest).toBe('Two calls.');
    });
  });
});
