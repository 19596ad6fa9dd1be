import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { executeFileTool, type ToolContext } from '../../../src/tools/file-tools';
import { parseToolArguments, toolDefinition } from '../../../src/tools/registry';

describe('file tools confined to the workspace', () => {
  let workspace: string;
  let outside: string;
  let ctx: ToolContext;

  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-ws-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret');
    fs.mkdirSync(path.join(workspace, 'tests'));
    fs.writeFileSync(path.join(workspace, 'tests', 'test_given.py'), 'def test_x(): pass\n');
    ctx = { workspace, protectedPaths: ['tests/test_given.py'] };
  });

  afterEach(() => {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const run = (name: 'list_files' | 'read_file' | 'create_file' | 'delete_file', args: unknown) =>
    executeFileTool(ctx, name, typeof args === 'string' ? args : JSON.stringify(args));

  test('create, read, list and delete inside the workspace', async () => {
    expect(await run('create_file', { path: 'pkg/mod.py', content: 'x = 1\n' })).toMatchObject({
      ok: true,
      path: 'pkg/mod.py',
      bytes: 6,
    });
    expect(await run('read_file', { path: 'pkg/mod.py' })).toMatchObject({ ok: true, content: 'x = 1\n' });
    expect(await run('list_files', {})).toMatchObject({
      ok: true,
      files: ['pkg/mod.py', 'tests/test_given.py'],
    });
    expect(await run('list_files', { path: 'pkg' })).toMatchObject({ ok: true, files: ['pkg/mod.py'] });
    expect(await run('delete_file', { path: 'pkg/mod.py' })).toMatchObject({ ok: true });
    expect(fs.existsSync(path.join(workspace, 'pkg', 'mod.py'))).toBe(false);
  });

  test.each([
    ['..', { path: '../secret.txt' }],
    ['nested ..', { path: 'pkg/../../secret.txt' }],
    ['absolute', { path: '/etc/passwd' }],
  ])('a path that leaves the workspace (%s) is refused', async (_kind, args) => {
    const result = await run('read_file', args);
    expect(result.ok).toBe(false);
    const write = await run('create_file', { ...args, content: 'pwned' });
    expect(write.ok).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  test('a path through a symbolic link is refused for reading and writing', async () => {
    fs.symlinkSync(outside, path.join(workspace, 'escape'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
    expect(await run('read_file', { path: 'escape/secret.txt' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/symbolic link/),
    });
    expect(await run('read_file', { path: 'link.txt' })).toMatchObject({ ok: false });
    expect(await run('create_file', { path: 'escape/new.txt', content: 'x' })).toMatchObject({ ok: false });
    expect(await run('delete_file', { path: 'link.txt' })).toMatchObject({ ok: false });
    expect(fs.existsSync(path.join(outside, 'new.txt'))).toBe(false);
    expect(fs.existsSync(path.join(outside, 'secret.txt'))).toBe(true);
  });

  test('acceptance tests given by the user cannot be overwritten or deleted', async () => {
    expect(await run('create_file', { path: 'tests/test_given.py', content: '' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/acceptance test/),
    });
    expect(await run('delete_file', { path: './tests/test_given.py' })).toMatchObject({ ok: false });
    expect(fs.readFileSync(path.join(workspace, 'tests', 'test_given.py'), 'utf8')).toContain('test_x');
  });

  test('invalid JSON, unknown keys and missing fields are answered, not executed', async () => {
    expect(await run('create_file', '{"path": "a.py", "content": ')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/not valid JSON/),
    });
    expect(await run('create_file', { path: 'a.py', content: 'x', mode: 777 })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/schema/),
    });
    expect(await run('create_file', { path: 'a.py' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/content/),
    });
    expect(fs.existsSync(path.join(workspace, 'a.py'))).toBe(false);
    expect(await run('read_file', { path: 'missing.py' })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/no such file/),
    });
  });
});

describe('tool schemas', () => {
  test('one zod schema yields the JSON schema the model sees, strict and complete', () => {
    const def = toolDefinition('submit_analysis');
    expect(def.function.parameters).toEqual({
      type: 'object',
      properties: {
        root_cause: expect.objectContaining({ type: 'string' }),
        fix_hypothesis: expect.objectContaining({ type: 'string' }),
        files_to_change: { type: 'array', items: { type: 'string' } },
        tests_wrong: expect.objectContaining({ type: 'boolean' }),
      },
      required: ['root_cause', 'fix_hypothesis', 'files_to_change', 'tests_wrong'],
      additionalProperties: false,
    });
    const listParameters = toolDefinition('list_files').function.parameters;
    expect(listParameters.additionalProperties).toBe(false);
    expect(listParameters.required).toBeUndefined();
  });

  test('the same schema parses the arguments', () => {
    expect(parseToolArguments('submit_plan', '{"summary":"s","steps":["a"],"files":[]}')).toEqual({
      ok: true,
      args: { summary: 's', steps: ['a'], files: [] },
    });
    expect(parseToolArguments('submit_plan', '{"summary":"s","steps":"a","files":[]}').ok).toBe(false);
  });
});
