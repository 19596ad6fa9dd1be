/**
 * `--instructions FILE` on `aca run` and the commands that go on from a run: the CLI reads the
 * file before anything is started, and bad input is one line on stderr and exit 2. The server is
 * unreachable here, so a command that went on past its checks would exit otherwise.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_INSTRUCTIONS_BYTES, validateRunRequest } from '../../../src/api/run-request';
import { EXIT } from '../../../src/cli/cli-context';
import { main } from '../../../src/cli/main';
import { parseRunRequest } from '../../../src/cli/run-command';
import { loadConfig } from '../../../src/config';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-instructions-'));
const home = path.join(dir, 'home');
const savedEnv = { ...process.env };
beforeAll(() => {
  process.env.ACA_HOME = home;
  process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
});
afterAll(() => {
  process.env = savedEnv;
  fs.rmSync(dir, { recursive: true, force: true });
});

const file = (name: string, content: string | Buffer): string => {
  const at = path.join(dir, name);
  fs.writeFileSync(at, content);
  return at;
};

async function cli(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l), isTTY: false });
  return { code, out, err };
}

describe('--instructions FILE', () => {
  const fifo = path.join(dir, 'fifo');
  beforeAll(() => execFileSync('mkfifo', [fifo]));

  const bad: Array<[string, () => string, RegExp]> = [
    [
      'a missing file',
      () => path.join(dir, 'nope.md'),
      /^aca: --instructions .*nope\.md cannot be read: no such file$/,
    ],
    ['a folder', () => dir, /^aca: --instructions .* is a directory, not a file$/],
    ['a FIFO, which is never waited on', () => fifo, /^aca: --instructions .*fifo is a fifo, not a file$/],
    [
      'a file over 256 KiB',
      () => file('big.md', 'x'.repeat(MAX_INSTRUCTIONS_BYTES + 1)),
      /^aca: --instructions .*big\.md is over the limit of 262144 bytes \(256 KiB\)$/,
    ],
    ['binary junk', () => file('junk.md', Buffer.from([0x41, 0, 0x42])), /contains a NUL byte/],
    [
      'bytes that are not UTF-8',
      () => file('latin1.md', Buffer.from([0x63, 0x61, 0x66, 0xe9])),
      /is not UTF-8 text$/,
    ],
    ['an empty file', () => file('empty.md', '  \n'), /^aca: --instructions .*empty\.md is empty$/],
  ];

  test.each(bad)('%s: aca run exits 2 with one line and starts nothing', async (_name, make, message) => {
    const result = await cli(['run', 'write code', '--no-repo', '--detach', '--instructions', make()]);
    expect(result.code).toBe(EXIT.badInput);
    expect(result.err).toHaveLength(1);
    expect(result.err[0]).toMatch(message);
    expect(result.out).toEqual([]);
    expect(fs.existsSync(path.join(home, 'workspaces'))).toBe(false);
  });

  test('with a good file the same command goes on to the server (here unreachable)', async () => {
    const result = await cli([
      'run',
      'write code',
      '--no-repo',
      '--detach',
      '--instructions',
      file('ok.md', 'Use tabs.\n'),
    ]);
    expect(result.code).toBe(EXIT.unreachable);
  });

  test.each(['continue', 'retry', 'fork'])(
    'aca %s checks its --instructions before reaching the server',
    async (command) => {
      const args = command === 'continue' ? ['continue', 'some-run', 'more'] : [command, 'some-run'];
      if (command === 'fork') args.push('--at', '1');
      const result = await cli([...args, '--detach', '--instructions', path.join(dir, 'nope.md')]);
      expect(result.code).toBe(EXIT.badInput);
      expect(result.err).toEqual([expect.stringMatching(/^aca: --instructions .* no such file$/)]);
    },
  );

  test("a good file's text becomes the run's instructions, as given", async () => {
    const text = '# House rules\n\nUse tabs. Never touch vendor/.\n';
    const request = await parseRunRequest(
      'write code',
      { repo: false, instructions: file('rules.md', text) },
      loadConfig({ ...process.env, ACA_HOME: home }),
    );
    expect(request.input.instructions).toBe(text);
    const without = await parseRunRequest(
      'write code',
      { repo: false },
      loadConfig({ ...process.env, ACA_HOME: home }),
    );
    expect(without.input).not.toHaveProperty('instructions');
  });

  test('the library API checks the text as the CLI does', async () => {
    const config = loadConfig({ ...process.env, ACA_HOME: home });
    await expect(validateRunRequest({ task: 'x', instructions: ' ' }, config)).rejects.toThrow(
      'the --instructions text is empty',
    );
    await expect(
      validateRunRequest({ task: 'x', instructions: 'é'.repeat(MAX_INSTRUCTIONS_BYTES / 2 + 1) }, config),
    ).rejects.toThrow(/is 262146 bytes, over the limit of 262144/);
    await expect(
      validateRunRequest({ task: 'x', instructions: 42 as unknown as string }, config),
    ).rejects.toThrow('instructions must be text');
  });
});
