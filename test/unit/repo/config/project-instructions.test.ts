/**
 * The project's instructions as an agent's first message carries them: read from the run's base
 * commit with git, in the AGENTS.md convention's order, within a token budget. The repository is
 * hostile: links are never followed, a huge file is read only as far as the budget could use,
 * binary files and control characters never reach the prompt.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readProjectInstructions } from '../../../../src/repo';
import { gitIn, makeRepo, removeFixtureRepos, writeFiles } from '../../../helpers/repo-fixtures';

afterAll(removeFixtureRepos);

const head = (repo: string) => gitIn(repo, 'rev-parse', 'HEAD').trim();
const tokens = (text: string) => Math.ceil(text.length / 4);

function read(
  repo: string,
  options: { paths?: string[]; extra?: string; budget?: number; commit?: string } = {},
) {
  return readProjectInstructions({
    git: { gitDir: path.join(repo, '.git') },
    baseCommit: options.commit ?? head(repo),
    paths: options.paths ?? [],
    extra: options.extra ?? null,
    budgetTokens: options.budget ?? 8_000,
  });
}

/** Where each piece of text stands in `text`; -1 for one that is not there. */
const positions = (text: string, pieces: string[]) => pieces.map((piece) => text.indexOf(piece));

describe('project instructions from the base commit', () => {
  test('the root files in their order, then the plan folders outermost to nearest, then --instructions', async () => {
    const repo = makeRepo({
      'AGENTS.md': 'ROOT AGENTS\n',
      'CLAUDE.md': 'ROOT CLAUDE\n',
      'CONVENTIONS.md': 'ROOT CONVENTIONS\n',
      '.github/copilot-instructions.md': 'ROOT COPILOT\n',
      'src/AGENTS.md': 'SRC AGENTS\n',
      'src/api/AGENTS.md': 'API AGENTS\n',
      'src/api/client.ts': 'export {};\n',
      'docs/AGENTS.md': 'DOCS AGENTS (no plan file there)\n',
      'lib/AGENTS.md': 'LIB AGENTS\n',
    });
    const planner = await read(repo, { extra: 'USER TEXT' });
    expect(planner.files.map((f) => f.path)).toEqual([
      'AGENTS.md',
      'CLAUDE.md',
      'CONVENTIONS.md',
      '.github/copilot-instructions.md',
      '--instructions',
    ]);
    expect(planner.text).not.toContain('SRC AGENTS');

    const coder = await read(repo, { paths: ['./src/api/client.ts', 'lib/'], extra: 'USER TEXT' });
    expect(coder.files.map((f) => f.path)).toEqual([
      'AGENTS.md',
      'CLAUDE.md',
      'CONVENTIONS.md',
      '.github/copilot-instructions.md',
      'lib/AGENTS.md',
      'src/AGENTS.md',
      'src/api/AGENTS.md',
      '--instructions',
    ]);
    const at = positions(coder.text, [
      'ROOT AGENTS',
      'ROOT CLAUDE',
      'ROOT CONVENTIONS',
      'ROOT COPILOT',
      'SRC AGENTS',
      'API AGENTS',
      'USER TEXT',
    ]);
    expect(at.every((p) => p >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(coder.text).toContain('=== src/api/AGENTS.md ===\nAPI AGENTS');
    expect(coder.text).not.toContain('DOCS AGENTS');
    expect(coder.files.every((f) => !f.clipped)).toBe(true);
    expect(coder.omitted).toEqual([]);
  });

  test('a plan path that leaves the repository names no folder', async () => {
    const outside = makeRepo({ 'AGENTS.md': 'OUTSIDE\n' });
    const repo = makeRepo({ 'x/AGENTS.md': 'X AGENTS\n' });
    const result = await read(repo, {
      paths: ['../' + path.basename(outside) + '/f.py', '/etc/f.py', 'x/../../f.py', '.git/f', '-rf', 'a\0b'],
    });
    expect(result).toEqual({ text: '', files: [], omitted: [] });
  });

  test('a 1 MB AGENTS.md is clipped within the budget, keeping its start, with a note; small files stay whole', async () => {
    const line = (n: number) => `Rule ${n}: keep functions short and name them for what they do.\n`;
    let big = '';
    for (let n = 1; big.length < 1_000_000; n++) big += line(n);
    const repo = makeRepo({ 'AGENTS.md': big, 'CLAUDE.md': 'SMALL CLAUDE FILE\n' });
    for (const budget of [8_000, 2_000]) {
      const result = await read(repo, { budget, extra: 'USER TEXT' });
      expect(tokens(result.text)).toBeLessThanOrEqual(budget);
      expect(result.text).toContain(`=== AGENTS.md ===\n${line(1)}${line(2)}`);
      expect(result.text).toContain('SMALL CLAUDE FILE');
      expect(result.text).toContain('USER TEXT');
      expect(result.text).toMatch(/\[… the rest of AGENTS\.md, about \d+ tokens, is left out\]/);
      expect(result.text).toMatch(/only the start of AGENTS\.md is shown/);
      const agents = result.files.find((f) => f.path === 'AGENTS.md')!;
      expect(agents.clipped).toBe(true);
      expect(agents.tokens).toBeGreaterThan(budget / 2);
      expect(result.files.find((f) => f.path === 'CLAUDE.md')).toMatchObject({ clipped: false });
    }
  });

  test('with room for few sections, the nearest folders keep theirs and the outer ones are named as left out', async () => {
    const files: Record<string, string> = { 'AGENTS.md': 'ROOT\n' };
    const deep = ['a', 'a/b', 'a/b/c', 'a/b/c/d', 'a/b/c/d/e'];
    for (const folder of deep) files[`${folder}/AGENTS.md`] = `${folder.toUpperCase()} `.repeat(200);
    const repo = makeRepo(files);
    const result = await read(repo, { paths: ['a/b/c/d/e/f.py'], budget: 700 });
    expect(tokens(result.text)).toBeLessThanOrEqual(700);
    expect(result.files.map((f) => f.path)).toContain('AGENTS.md');
    expect(result.files.map((f) => f.path)).toContain('a/b/c/d/e/AGENTS.md');
    expect(result.omitted).toContain('a/AGENTS.md');
    expect(result.text).toContain('a/AGENTS.md was left out: no room');
  });

  test('an AGENTS.md larger than any git output aca takes whole is read only as far as the budget could use', async () => {
    const repo = makeRepo({ 'README.md': 'x\n' });
    // Past the 64 MiB git() holds of one call's output: read whole, it would fail.
    const file = path.join(repo, 'AGENTS.md');
    fs.writeFileSync(file, 'FIRST LINE\n');
    fs.appendFileSync(file, Buffer.alloc(65 * 1024 * 1024, 'y'));
    gitIn(repo, 'add', '-A');
    gitIn(repo, 'commit', '--quiet', '-m', 'huge');
    fs.rmSync(file);
    const result = await read(repo, { budget: 1_000 });
    expect(result.text).toMatch(
      /^=== AGENTS\.md ===\nFIRST LINE\ny+\n\[… the rest of AGENTS\.md, about \d+ tokens, is left out\]/,
    );
    expect(tokens(result.text)).toBeLessThanOrEqual(1_000);
    expect(result.files).toEqual([{ path: 'AGENTS.md', tokens: expect.any(Number), clipped: true }]);
  });

  test('a symlinked AGENTS.md is never followed', async () => {
    const repo = makeRepo({ 'CLAUDE.md': 'REAL\n' });
    fs.symlinkSync('/etc/passwd', path.join(repo, 'AGENTS.md'));
    fs.mkdirSync(path.join(repo, 'src'));
    fs.symlinkSync('../CLAUDE.md', path.join(repo, 'src', 'AGENTS.md'));
    gitIn(repo, 'add', '-A');
    gitIn(repo, 'commit', '--quiet', '-m', 'links');
    const result = await read(repo, { paths: ['src/x.py'] });
    expect(result.files.map((f) => f.path)).toEqual(['CLAUDE.md']);
    expect(result.omitted).toEqual(['AGENTS.md', 'src/AGENTS.md']);
    expect(result.text).not.toContain('root:');
    expect(result.text).toContain('AGENTS.md was not read: a symbolic link');
  });

  test('a folder of the plan that is a link, or another repository, is never entered', async () => {
    const repo = makeRepo({ 'real/AGENTS.md': 'REAL FOLDER\n' });
    fs.symlinkSync('real', path.join(repo, 'src'));
    fs.symlinkSync('/etc', path.join(repo, 'etc'));
    gitIn(repo, 'add', '-A');
    // A gitlink (a submodule's entry): its AGENTS.md is another repository's, not in this commit.
    const inner = makeRepo({ 'AGENTS.md': 'SUBMODULE\n' });
    gitIn(repo, 'update-index', '--add', '--cacheinfo', `160000,${head(inner)},vendor`);
    gitIn(repo, 'commit', '--quiet', '-m', 'links');
    const result = await read(repo, { paths: ['src/x.py', 'etc/passwd', 'vendor/x.py', 'vendor/AGENTS.md'] });
    expect(result).toEqual({ text: '', files: [], omitted: [] });
    // The same folder named by its own path is read.
    expect((await read(repo, { paths: ['real/x.py'] })).text).toContain('REAL FOLDER');
  });

  test('binary junk is left out, terminal escapes and invisible characters are dropped', async () => {
    const repo = makeRepo({ 'README.md': 'x\n' });
    fs.writeFileSync(
      path.join(repo, 'AGENTS.md'),
      Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 0xff, 0xfe]),
    );
    writeFiles(repo, {
      'CLAUDE.md':
        '\ufeffUse tabs.\r\n\u001b[2J\u001b]52;c;ZXZpbA==\u0007Hidden\u202e txet\u0008 end\u009b\r\n',
    });
    gitIn(repo, 'add', '-A');
    gitIn(repo, 'commit', '--quiet', '-m', 'junk');
    const result = await read(repo);
    expect(result.omitted).toEqual(['AGENTS.md']);
    expect(result.text).toContain('AGENTS.md was not read: not text');
    expect(result.text).toContain('=== CLAUDE.md ===\nUse tabs.\n[2J]52;c;ZXZpbA==Hidden txet end');
    expect(result.text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\ufeff]/);
  });

  test('a file only in the work tree, or changed after the base commit, is read as the base commit has it', async () => {
    const repo = makeRepo({ 'AGENTS.md': 'BASE TEXT\n', 'src/x.py': '' });
    const base = head(repo);
    writeFiles(repo, { 'AGENTS.md': 'WRITTEN BY THE RUN\n', 'src/AGENTS.md': 'NESTED BY THE RUN\n' });
    gitIn(repo, 'add', '-A');
    gitIn(repo, 'commit', '--quiet', '-m', 'an agent wrote these');
    writeFiles(repo, { 'CLAUDE.md': 'UNTRACKED\n' });
    const result = await read(repo, { commit: base, paths: ['src/x.py'] });
    expect(result.files.map((f) => f.path)).toEqual(['AGENTS.md']);
    expect(result.text).toContain('BASE TEXT');
    expect(result.text).not.toMatch(/BY THE RUN|UNTRACKED/);
  });

  test("the user's text, when a turn got only its start, says how much of it was left out", async () => {
    const repo = makeRepo({ 'AGENTS.md': 'ROOT\n' });
    const start = 'Keep it short.\n'.repeat(2_500);
    const result = await readProjectInstructions({
      git: { gitDir: path.join(repo, '.git') },
      baseCommit: head(repo),
      paths: [],
      extra: `A pair \ud83d\ude00 stays, half of one \ud83d goes.\n${start}`,
      extraChars: 400_000,
      budgetTokens: 2_000,
    });
    expect(tokens(result.text)).toBeLessThanOrEqual(2_000);
    expect(result.files).toEqual([
      { path: 'AGENTS.md', tokens: 1, clipped: false },
      { path: '--instructions', tokens: expect.any(Number), clipped: true },
    ]);
    const left = Number(/the rest of --instructions, about (\d+) tokens/.exec(result.text)?.[1]);
    // Counted from the whole text's length, not from the start the turn got (about 9,400 tokens).
    expect(left).toBeGreaterThan(97_000);
    expect(left).toBeLessThan(100_000);
    // Half a surrogate pair is dropped: the conversation is stored as JSON, in Postgres too.
    expect(result.text).toContain('A pair \ud83d\ude00 stays, half of one  goes.');
  });

  test('the base commit must be a full commit id', async () => {
    const repo = makeRepo({ 'AGENTS.md': 'x\n' });
    await expect(read(repo, { commit: 'HEAD' })).rejects.toThrow('is not a full commit id');
  });
});
