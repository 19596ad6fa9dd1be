/**
 * Contract tests for the tools of docs/contract.md, section 3 that work on large code: ranged
 * reads, exact edits, search and listing with depth and .gitignore, each with hostile arguments.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { partlyReadFiles } from '../../../src/agents/agent-turn';
import type { Conversation } from '../../../src/store/conversation-store';
import { executeFileTool, type FileToolName, type ToolContext } from '../../../src/tools/file-tools';

describe('tools for large code', () => {
  let workspace: string;
  let outside: string;
  let ctx: ToolContext;
  const run = async (
    name: FileToolName,
    args: unknown,
    context: ToolContext = ctx,
  ): Promise<Record<string, unknown>> => executeFileTool(context, name, JSON.stringify(args));

  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-tools-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-tools-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'needle in the host\n');
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`);
    lines[2999] = 'def target():';
    fs.mkdirSync(path.join(workspace, 'src'));
    fs.writeFileSync(path.join(workspace, 'src', 'big.py'), `${lines.join('\n')}\n`);
    fs.writeFileSync(path.join(workspace, 'src', 'small.py'), 'x = 1\ny = 2\nx = 1\n');
    ctx = { workspace, protectedPaths: ['tests/test_given.py'] };
  });

  afterEach(() => {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  describe('read_file', () => {
    test('a window of lines, with its bounds and the file length', async () => {
      expect(await run('read_file', { path: 'src/big.py', start_line: 2999, end_line: 3001 })).toEqual({
        ok: true,
        path: 'src/big.py',
        content: 'line 2999\ndef target():\nline 3001\n',
        start_line: 2999,
        end_line: 3001,
        total_lines: 5000,
        truncated: false,
      });
    });

    test('a window larger than one answer is cut at a line and says so', async () => {
      fs.writeFileSync(path.join(workspace, 'wide.txt'), `${'x'.repeat(999)}\n`.repeat(500));
      const answer = await run('read_file', { path: 'wide.txt' });
      expect(answer).toMatchObject({
        ok: true,
        start_line: 1,
        end_line: 100,
        total_lines: 500,
        truncated: true,
      });
    });

    test('a very long line is cut, says so and how to read on; the answer stays bounded', async () => {
      const long = 'ab'.repeat(7_950_000);
      fs.writeFileSync(path.join(workspace, 'min.js'), `first\n${long}\nlast\n`);
      const answer = (await run('read_file', { path: 'min.js' })) as { content: string } & Record<
        string,
        unknown
      >;
      expect(answer).toMatchObject({
        ok: true,
        start_line: 1,
        end_line: 3,
        total_lines: 3,
        clipped_lines: [2],
      });
      expect(answer.content.length).toBeLessThan(3_000);
      const [, second, third] = answer.content.split('\n');
      expect(second).toMatch(
        /^(ab){1000} \[… line 2 has 15900000 characters; these are 1-2000\. read on with start_line 2, end_line 2, start_column 2001\]$/,
      );
      expect(third).toBe('last');
      const on = (await run('read_file', {
        path: 'min.js',
        start_line: 2,
        end_line: 2,
        start_column: 2001,
      })) as { content: string };
      expect(on.content.length).toBeLessThanOrEqual(100_000);
      expect(on.content.startsWith('ab'.repeat(12_500))).toBe(true);
      expect(on.content.slice(25_000)).toBe(
        ' [… line 2 has 15900000 characters; these are 2001-27000. read on with start_line 2, end_line 2, start_column 27001]\n',
      );
      const end = (await run('read_file', {
        path: 'min.js',
        start_line: 2,
        end_line: 2,
        start_column: 15_899_999,
      })) as { content: string };
      expect(end.content).toBe('ab [… line 2 has 15900000 characters; these are 15899999-15900000.]\n');
      expect(await run('read_file', { path: 'min.js', start_column: 5 })).toMatchObject({ ok: false });
    });

    test('bounds that make no sense are answered with an error', async () => {
      expect(await run('read_file', { path: 'src/small.py', start_line: 9 })).toMatchObject({
        ok: false,
        error: expect.stringMatching(/past the end: "src\/small.py" has 3 lines/),
      });
      expect(await run('read_file', { path: 'src/small.py', start_line: 3, end_line: 2 })).toMatchObject({
        ok: false,
      });
      expect(await run('read_file', { path: 'src/small.py', start_line: 0 })).toMatchObject({ ok: false });
    });
  });

  describe('edit_file', () => {
    test('replaces text that occurs exactly once', async () => {
      expect(
        await run('edit_file', {
          path: 'src/big.py',
          old_string: 'def target():',
          new_string: 'def found():',
        }),
      ).toMatchObject({
        ok: true,
        replacements: 1,
      });
      const text = fs.readFileSync(path.join(workspace, 'src', 'big.py'), 'utf8').split('\n');
      expect(text[2999]).toBe('def found():');
      expect(text).toHaveLength(5001);
    });

    test('absent or repeated text is refused with the count and where', async () => {
      expect(
        await run('edit_file', { path: 'src/small.py', old_string: 'z = 3', new_string: '' }),
      ).toMatchObject({
        ok: false,
        error: 'old_string does not occur in "src/small.py"',
      });
      expect(
        await run('edit_file', { path: 'src/small.py', old_string: 'x = 1', new_string: 'x = 9' }),
      ).toMatchObject({
        ok: false,
        error: expect.stringMatching(/occurs 2 times in "src\/small.py" \(lines 1, 3\)/),
      });
      expect(fs.readFileSync(path.join(workspace, 'src', 'small.py'), 'utf8')).toBe('x = 1\ny = 2\nx = 1\n');
      expect(
        await run('edit_file', {
          path: 'src/small.py',
          old_string: 'x = 1',
          new_string: 'x = 9',
          replace_all: true,
        }),
      ).toMatchObject({
        ok: true,
        replacements: 2,
      });
      expect(fs.readFileSync(path.join(workspace, 'src', 'small.py'), 'utf8')).toBe('x = 9\ny = 2\nx = 9\n');
    });

    test("a file over the edit limit is refused as the model's mistake, not a failure of the tool", async () => {
      fs.writeFileSync(path.join(workspace, 'huge.txt'), 'a\n'.repeat(8_000_000));
      const started = process.hrtime.bigint();
      expect(
        await run('edit_file', { path: 'huge.txt', old_string: 'a', new_string: 'bb', replace_all: true }),
      ).toEqual({
        ok: false,
        error: expect.stringMatching(/"huge.txt" is 16000000 bytes; files over 1000000 bytes are not edited/),
      });
      expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(500);
      expect(fs.statSync(path.join(workspace, 'huge.txt')).size).toBe(16_000_000);
    });

    test('a replace_all that would outgrow the write limit is refused before it is built', async () => {
      fs.writeFileSync(path.join(workspace, 'many.txt'), 'a'.repeat(900_000));
      expect(
        await run('edit_file', {
          path: 'many.txt',
          old_string: 'a',
          new_string: 'x'.repeat(1000),
          replace_all: true,
        }),
      ).toEqual({
        ok: false,
        error: 'the edited file would be 900000000 bytes; the limit is 1000000',
      });
      expect(
        await run('edit_file', { path: 'many.txt', old_string: 'a', new_string: 'b', replace_all: true }),
      ).toEqual({ ok: true, path: 'many.txt', replacements: 900_000, bytes: 900_000 });
      expect(fs.readFileSync(path.join(workspace, 'many.txt'), 'utf8')).toBe('b'.repeat(900_000));
    });

    test('replacement text is taken literally, not as a pattern', async () => {
      await run('edit_file', { path: 'src/small.py', old_string: 'y = 2', new_string: "y = '$&$1'" });
      expect(fs.readFileSync(path.join(workspace, 'src', 'small.py'), 'utf8')).toContain("y = '$&$1'");
    });

    test('acceptance tests and paths out of the workspace are refused', async () => {
      fs.mkdirSync(path.join(workspace, 'tests'));
      fs.writeFileSync(path.join(workspace, 'tests', 'test_given.py'), 'assert True\n');
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
      for (const p of ['tests/test_given.py', '../secret.txt', '/etc/hostname', 'link.txt']) {
        expect(
          await run('edit_file', { path: p, old_string: 'e', new_string: 'E', replace_all: true }),
        ).toMatchObject({ ok: false });
      }
      expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('needle in the host\n');
    });
  });

  describe('search_files', () => {
    test('matches with path, line and text; path and glob narrow it', async () => {
      expect(await run('search_files', { pattern: 'def \\w+\\(' })).toEqual({
        ok: true,
        matches: [{ path: 'src/big.py', line: 3000, text: 'def target():' }],
      });
      fs.writeFileSync(path.join(workspace, 'notes.md'), 'def not_code():\n');
      const scoped = await run('search_files', { pattern: 'def ', glob: '*.py' });
      expect((scoped as { matches: Array<{ path: string }> }).matches.map((m) => m.path)).toEqual([
        'src/big.py',
      ]);
      const inSrc = await run('search_files', { pattern: 'def ', path: 'src' });
      expect((inSrc as { matches: unknown[] }).matches).toHaveLength(1);
    });

    test('honours .gitignore and skips dependencies', async () => {
      fs.writeFileSync(path.join(workspace, '.gitignore'), 'build/\n');
      for (const dir of ['build', 'node_modules/pkg']) {
        fs.mkdirSync(path.join(workspace, dir), { recursive: true });
        fs.writeFileSync(path.join(workspace, dir, 'gen.py'), 'def target():\n');
      }
      const answer = await run('search_files', { pattern: 'def target' });
      expect((answer as { matches: Array<{ path: string }> }).matches.map((m) => m.path)).toEqual([
        'src/big.py',
      ]);
    });

    test('never reads through a link out of the workspace', async () => {
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'leak.txt'));
      fs.symlinkSync(outside, path.join(workspace, 'hostdir'));
      expect(await run('search_files', { pattern: 'needle' })).toEqual({ ok: true, matches: [] });
      expect(await run('search_files', { pattern: 'needle', path: 'hostdir' })).toMatchObject({ ok: false });
      expect(await run('search_files', { pattern: 'needle', path: '..' })).toMatchObject({ ok: false });
      expect(await run('search_files', { pattern: 'needle', glob: '../**' })).toMatchObject({ ok: false });
    });

    test('a planted git directory never configures the search, and no git directory or .git file is read', async () => {
      // Where the search's git once looked for its repository: its excludes would hide every .py.
      const planted = path.join(workspace, '.aca-no-repository');
      fs.mkdirSync(path.join(planted, 'info'), { recursive: true });
      fs.mkdirSync(path.join(planted, 'refs'));
      fs.mkdirSync(path.join(planted, 'objects'));
      fs.writeFileSync(path.join(planted, 'HEAD'), 'ref: refs/heads/main\n');
      fs.writeFileSync(
        path.join(planted, 'config'),
        '[core]\n\trepositoryformatversion = 0\n\tbare = true\n',
      );
      fs.writeFileSync(path.join(planted, 'info', 'exclude'), '*.py\n');
      for (const folder of ['.git', 'pkg/.git', 'pkg/.GIT', 'deep/er/.Git', 'GIT~1']) {
        fs.mkdirSync(path.join(workspace, folder), { recursive: true });
        fs.writeFileSync(path.join(workspace, folder, 'config'), 'def target():\n');
      }
      fs.writeFileSync(path.join(workspace, 'deep', '.git'), 'def target(): gitdir\n');
      const answer = await run('search_files', { pattern: 'def target' });
      expect(answer).toEqual({
        ok: true,
        matches: [{ path: 'src/big.py', line: 3000, text: 'def target():' }],
      });
    });

    test('a catastrophic pattern is an error, quickly; an invalid one too', async () => {
      fs.writeFileSync(path.join(workspace, 'aaa.txt'), `${'a'.repeat(50_000)}!\n`);
      const started = Date.now();
      expect(await run('search_files', { pattern: '(a|aa)+$' })).toMatchObject({
        ok: false,
        error: expect.stringMatching(/search_files failed/),
      });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(await run('search_files', { pattern: '(unclosed' })).toMatchObject({ ok: false });
    });

    test('a huge max_results is capped and the answer says it was cut', async () => {
      fs.writeFileSync(path.join(workspace, 'many.txt'), 'hit\n'.repeat(2000));
      const answer = (await run('search_files', { pattern: '^hit$', max_results: 1e9 })) as {
        matches: unknown[];
        truncated?: boolean;
      };
      expect(answer.matches).toHaveLength(500);
      expect(answer.truncated).toBe(true);
    });
  });

  describe('list_files', () => {
    test('depth and .gitignore', async () => {
      fs.writeFileSync(path.join(workspace, '.gitignore'), '*.log\nsrc/gen/\n');
      fs.mkdirSync(path.join(workspace, 'src', 'gen'));
      fs.writeFileSync(path.join(workspace, 'src', 'gen', 'out.py'), '');
      fs.writeFileSync(path.join(workspace, 'debug.log'), '');
      fs.writeFileSync(path.join(workspace, 'src', '.gitignore'), 'small.py\n');
      expect(await run('list_files', {})).toMatchObject({
        files: ['.gitignore', 'src/.gitignore', 'src/big.py'],
      });
      expect(await run('list_files', { depth: 1 })).toMatchObject({ files: ['.gitignore'] });
      expect(await run('list_files', { path: 'src' })).toMatchObject({
        files: ['src/.gitignore', 'src/big.py'],
      });
    });
  });

  test('a file read only in part cannot be overwritten whole until read whole or edited', async () => {
    const conversation = (calls: Array<[string, Record<string, unknown>]>): Conversation => ({
      ref: 'r',
      role: 'coder',
      model: 'm',
      language: 'python',
      workspace,
      protectedPaths: [],
      entries: [
        {
          kind: 'assistant',
          content: null,
          toolCalls: calls.map(([name], i) => ({ id: `c${i}`, name, arguments: '{}' })),
        },
      ],
      toolResults: Object.fromEntries(calls.map(([, result], i) => [`c${i}`, { ok: true, ...result }])),
      steps: [],
    });
    const windowed = { path: 'src/big.py', start_line: 1, end_line: 40, total_lines: 5000, truncated: false };
    const partly = partlyReadFiles(conversation([['read_file', windowed]]));
    expect([...partly]).toEqual(['src/big.py']);
    expect(
      await run('create_file', { path: 'src/big.py', content: 'lost\n' }, { ...ctx, partlyRead: partly }),
    ).toMatchObject({
      ok: false,
      error: expect.stringMatching(/read only in part/),
    });
    expect(fs.readFileSync(path.join(workspace, 'src', 'big.py'), 'utf8')).toContain('line 5000');
    const whole = { path: 'src/big.py', start_line: 1, end_line: 5000, total_lines: 5000, truncated: false };
    expect([
      ...partlyReadFiles(
        conversation([
          ['read_file', windowed],
          ['read_file', whole],
        ]),
      ),
    ]).toEqual([]);
    expect([
      ...partlyReadFiles(
        conversation([
          ['read_file', windowed],
          ['edit_file', { path: 'src/big.py' }],
        ]),
      ),
    ]).toEqual([]);
    // Windows that together hold every line are a whole read; with a gap, or of a file whose line
    // count changed in between, they are not.
    const window = (start_line: number, end_line: number, total_lines = 5000) => ({
      path: 'src/big.py',
      start_line,
      end_line,
      total_lines,
      truncated: true,
    });
    const partlyAfter = (...windows: Array<Record<string, unknown>>) => [
      ...partlyReadFiles(conversation(windows.map((w) => ['read_file', w]))),
    ];
    expect(partlyAfter(window(2801, 5000), window(1, 2800))).toEqual([]);
    expect(partlyAfter(window(1, 2800), window(2802, 5000))).toEqual(['src/big.py']);
    expect(partlyAfter(window(1, 2800, 4999), window(2801, 5000))).toEqual(['src/big.py']);
    // A window whose long lines were cut is no whole read either.
    expect(partlyAfter({ ...window(1, 5000), truncated: false, clipped_lines: [7] })).toEqual(['src/big.py']);
  });
});
