/**
 * aca on a user's repository, end to end through the built command, a real worker and Temporal
 * server and the scripted model: a worktree and branch per run, a commit per attempt, the
 * project's own tests and environment, baseline-aware success, and the review commands.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Scenario } from '../../src/llm/scenario';
import type { RunResult } from '../../src/shared/run-types';
import { createHarness, type Harness } from '../helpers/agent-harness';
import {
  addNodeModules,
  addVenv,
  gitIn,
  makeRepo,
  removeFixtureRepos,
  repoDigest,
  writeFiles,
} from '../helpers/repo-fixtures';
import { runCli } from '../helpers/run-cli';

type Call = { name: string; arguments: Record<string, unknown> };
const step = (...calls: Call[]) => ({ tool_calls: calls });
const call = (name: string, args: Record<string, unknown>): Call => ({ name, arguments: args });
const plan = [[step(call('submit_plan', { summary: 'Fix it', steps: ['fix'], files: [] }))]];
const analysis = (rootCause: string) => [
  step(
    call('submit_analysis', {
      root_cause: rootCause,
      fix_hypothesis: 'do it properly',
      files_to_change: [],
      tests_wrong: false,
    }),
  ),
];
const finish = (summary: string) => step(call('finish', { summary }));
const edit = (file: string, from: string, to: string) =>
  call('edit_file', { path: file, old_string: from, new_string: to });

const PY_TASK = 'Fix add() in calc/ops.py: it subtracts';
const PY_PROJECT = {
  '.gitignore': '.venv/\n__pycache__/\n',
  'calc/__init__.py': '',
  'calc/ops.py': 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
  'tests/test_ops.py':
    'from calc.ops import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
  'tests/test_service.py':
    'import socket\n\n\ndef test_needs_service():\n    socket.create_connection(("127.0.0.1", 9), timeout=1)\n',
  'tests/test_helper.py': 'import helperlib\n\n\ndef test_helper():\n    assert helperlib.answer() == 42\n',
};
const REPRODUCTION = 'from calc.ops import add\n\n\ndef test_add_adds():\n    assert add(40, 2) == 42\n';

/**
 * A test the Tester writes that, as code under test can, leaves a hash-based unchecked .pyc (its
 * hidden source never shown), folders git refuses to add, a link out of the repository and a new
 * binary file beside the files of the run.
 */
const PLANTING_TEST = [
  'import os, pathlib, py_compile, sys, tempfile',
  'from calc.ops import add',
  '',
  'ROOT = pathlib.Path(__file__).resolve().parent.parent',
  '',
  '',
  'def test_add_adds():',
  "    hidden = pathlib.Path(tempfile.mkdtemp()) / 'util.py'",
  '    hidden.write_text("print(\'hidden code\')\\n")',
  "    cache = ROOT / 'calc' / '__pycache__' / f'util.{sys.implementation.cache_tag}.pyc'",
  '    cache.parent.mkdir(exist_ok=True)',
  '    py_compile.compile(str(hidden), cfile=str(cache), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)',
  "    for folder in ('.GIT', 'calc/git~1'):",
  '        (ROOT / folder).mkdir(parents=True, exist_ok=True)',
  "        (ROOT / folder / 'config').write_text('[core]\\n\\tbare = true\\n')",
  "    if not (ROOT / 'calc' / 'settings.cfg').is_symlink():",
  "        os.symlink('/etc/hostname', ROOT / 'calc' / 'settings.cfg')",
  "    (ROOT / 'calc' / 'native.so').write_bytes(b'\\x7fELF\\x00\\x01')",
  '    assert add(40, 2) == 42',
  '',
].join('\n');

/**
 * A test the Tester writes that, as code under test can, leaves links into git directories: the
 * checkout's own `.git` (its hooks, its config, the folder itself, under other spellings and
 * through another link) and a folder laid out as a git directory of its own.
 */
const GIT_LINK_TEST = [
  'import os, pathlib',
  'from calc.ops import add',
  '',
  'ROOT = pathlib.Path(__file__).resolve().parent.parent',
  'LINKS = {',
  "    'tools/hooks': '../.git/hooks',",
  "    'gitconfig': '.git/config',",
  "    'dotgit': './.GIT',",
  "    'calc/store': '../calc/../.git/objects',",
  "    'hop': 'dotgit/hooks',",
  "    'vendor': 'fake',",
  '}',
  '',
  '',
  'def test_add_adds():',
  "    for name in ('fake/objects', 'fake/refs'):",
  '        (ROOT / name).mkdir(parents=True, exist_ok=True)',
  "        (ROOT / name / 'keep').write_text('')",
  "    (ROOT / 'fake' / 'HEAD').write_text('ref: refs/heads/main\\n')",
  '    for name, target in LINKS.items():',
  '        link = ROOT / name',
  '        link.parent.mkdir(parents=True, exist_ok=True)',
  '        if not link.is_symlink():',
  '            os.symlink(target, link)',
  '    assert add(40, 2) == 42',
  '',
].join('\n');

const scenarios: Scenario[] = [
  {
    name: 'repo-py-fix',
    agents: {
      planner: plan,
      coder: [
        [step(edit('calc/ops.py', 'return a - b', 'return a * b + 0')), finish('add multiplies now')],
        [step(edit('calc/ops.py', 'return a * b + 0', 'return a + b')), finish('add adds')],
      ],
      tester: [
        [
          step(call('create_file', { path: 'tests/test_task.py', content: REPRODUCTION })),
          finish('wrote it'),
        ],
      ],
      reflector: [analysis('add multiplies')],
    },
  },
  {
    name: 'repo-py-regress',
    agents: {
      planner: plan,
      coder: [
        [
          step(
            edit('calc/ops.py', 'return a - b', 'return a + b'),
            call('delete_file', { path: 'tests/test_helper.py' }),
          ),
          finish('fixed add, removed a test'),
        ],
        [
          step(
            call('create_file', {
              path: 'tests/test_helper.py',
              content: PY_PROJECT['tests/test_helper.py'],
            }),
            edit('calc/ops.py', 'return a * b', 'return a ** b'),
          ),
          finish('put the test back, changed mul'),
        ],
      ],
      tester: [
        [
          step(call('create_file', { path: 'tests/test_task.py', content: REPRODUCTION })),
          finish('wrote it'),
        ],
      ],
      reflector: [analysis('a test is gone'), analysis('mul is broken')],
    },
  },
  {
    name: 'repo-py-plant',
    agents: {
      planner: plan,
      coder: [
        [step(edit('calc/ops.py', 'return a - b', 'return a * b + 0')), finish('add multiplies now')],
        [step(edit('calc/ops.py', 'return a * b + 0', 'return a + b')), finish('add adds')],
      ],
      tester: [
        [
          step(call('create_file', { path: 'tests/test_task.py', content: PLANTING_TEST })),
          finish('wrote it'),
        ],
      ],
      reflector: [analysis('add multiplies')],
    },
  },
  {
    name: 'repo-py-gitlinks',
    agents: {
      planner: plan,
      // Two attempts: the links the test leaves at the first are in the second's commit.
      coder: [
        [step(edit('calc/ops.py', 'return a - b', 'return a * b + 0')), finish('add multiplies now')],
        [step(edit('calc/ops.py', 'return a * b + 0', 'return a + b')), finish('add adds')],
      ],
      tester: [
        [
          step(call('create_file', { path: 'tests/test_task.py', content: GIT_LINK_TEST })),
          finish('wrote it'),
        ],
      ],
      reflector: [analysis('add multiplies')],
    },
  },
  {
    name: 'repo-ts-jest',
    agents: {
      planner: plan,
      coder: [[step(edit('src/slug.ts', ".replace(/ /g, '_')", ".replace(/ /g, '-')")), finish('dashes')]],
      tester: [[finish('the project has its tests')]],
    },
  },
  {
    name: 'repo-js-vitest',
    agents: {
      planner: plan,
      coder: [[step(edit('src/words.js', 'split(",")', 'split(/\\s+/)')), finish('split on spaces')]],
      tester: [[finish('the project has its tests')]],
    },
  },
  {
    name: 'repo-command',
    agents: {
      planner: plan,
      coder: [[step(call('create_file', { path: 'status.txt', content: 'fixed\n' })), finish('fixed')]],
      tester: [[finish('nothing to add')]],
    },
  },
];

describe('runs on a repository (--repo)', () => {
  let h: Harness;
  let env: NodeJS.ProcessEnv;
  const newId = (label: string) => `repo-${label}-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    h = await createHarness({ scenarios });
    await h.startWorker();
    env = h.cliEnv();
  });
  afterAll(async () => {
    await h?.close();
    removeFixtureRepos();
  });

  function pythonRepo(): string {
    const repo = makeRepo(PY_PROJECT);
    addVenv(repo, { 'helperlib.py': 'def answer():\n    return 42\n' });
    fs.writeFileSync(path.join(repo, 'notes.txt'), 'my own notes, never committed\n');
    return repo;
  }

  async function run(repo: string, id: string, scenario: string, ...more: string[]): Promise<RunResult> {
    const r = await runCli(
      [
        'run',
        `${PY_TASK}\nmore words`,
        '--repo',
        repo,
        '--model',
        `scripted:${scenario}`,
        '--id',
        id,
        '--json',
        ...more,
      ],
      env,
    );
    if (r.stdout.trim() === '') throw new Error(`aca run printed nothing (exit ${r.code}): ${r.stderr}`);
    return JSON.parse(r.stdout) as RunResult;
  }

  test('Python: the fix lands at attempt 2 on its own branch; the user repository is untouched until aca apply', async () => {
    const repo = pythonRepo();
    const before = repoDigest(repo);
    const head = gitIn(repo, 'rev-parse', 'HEAD').trim();
    const id = newId('py');
    const result = await run(repo, id, 'repo-py-fix');
    await h.recordHistory(h.client.workflow.getHandle(id), 'repo-python-fix');

    expect(result).toMatchObject({
      state: 'SUCCESS',
      iterations: 2,
      repo: fs.realpathSync(repo),
      branch: `aca/${id}`,
      baseCommit: head,
    });
    // test_add and test_needs_service failed before the run; the second still fails and does not block.
    expect(result.baseline).toEqual({ passed: 2, failed: 2 });
    expect(result.regressions).toEqual([]);
    expect(result.attempts.map((a) => a.iteration)).toEqual([1, 2]);
    expect(result.attempts[0]!.commit).not.toBe(result.attempts[1]!.commit);
    expect(result.headCommit).toBe(result.attempts[1]!.commit);
    expect(result.changedFiles).toEqual(
      expect.arrayContaining([
        { path: 'calc/ops.py', status: 'modified', added: 1, removed: 1 },
        { path: 'tests/test_task.py', status: 'added', added: 5, removed: 0 },
      ]),
    );
    expect(repoDigest(repo)).toEqual(before);
    expect(gitIn(repo, 'rev-parse', 'HEAD').trim()).toBe(head);

    const log = gitIn(repo, 'log', '--format=%s|%an', `${head}..aca/${id}`).trim().split('\n').reverse();
    expect(log).toEqual([
      'aca: attempt 1, coder: add multiplies now|aca',
      'aca: attempt 1, tester: wrote it|aca',
      'aca: attempt 2, coder: add adds|aca',
    ]);

    const diff = await runCli(['diff', id], env);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('-    return a - b');
    expect(diff.stdout).toContain('+    return a + b');
    const stat = await runCli(['diff', id, '--stat'], env);
    expect(stat.stdout).toMatch(/calc\/ops\.py\s+\|\s+2 \+-/);

    // A tracked file changed: apply refuses (2) and changes nothing.
    fs.appendFileSync(path.join(repo, 'calc/__init__.py'), '# wip\n');
    const dirty = repoDigest(repo);
    expect((await runCli(['apply', id], env)).code).toBe(2);
    expect(repoDigest(repo)).toEqual(dirty);
    gitIn(repo, 'checkout', '--', 'calc/__init__.py');

    // The user moved on and changed the same line: a conflict (1), the repository byte for byte as it was.
    writeFiles(repo, { 'calc/ops.py': PY_PROJECT['calc/ops.py'].replace('return a - b', 'return b - a') });
    gitIn(repo, 'commit', '--quiet', '-am', 'my own change');
    const conflicted = repoDigest(repo);
    const conflict = await runCli(['apply', id], env);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('calc/ops.py');
    expect(repoDigest(repo)).toEqual(conflicted);
    gitIn(repo, 'reset', '--quiet', '--hard', head);

    const applied = await runCli(['apply', id], env);
    expect(applied.code).toBe(0);
    expect(gitIn(repo, 'rev-list', '--count', `${head}..HEAD`).trim()).toBe('1');
    expect(gitIn(repo, 'log', '-1', '--format=%s').trim()).toBe(PY_TASK);
    expect(fs.readFileSync(path.join(repo, 'calc/ops.py'), 'utf8')).toContain('return a + b');
    expect(fs.readFileSync(path.join(repo, 'notes.txt'), 'utf8')).toBe('my own notes, never committed\n');
    expect(gitIn(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');

    expect((await runCli(['discard', id], env)).code).toBe(0);
    expect(fs.existsSync(result.workspace)).toBe(false);
    expect(gitIn(repo, 'branch', '--list', `aca/${id}`).trim()).toBe('');
  });

  test('Python: an attempt that breaks or deletes a test that passed at the baseline does not succeed', async () => {
    const repo = pythonRepo();
    const id = newId('regress');
    const result = await run(repo, id, 'repo-py-regress', '--max-iterations', '2');
    expect(result).toMatchObject({ state: 'FAILED', reason: 'max_iterations', iterations: 2 });
    expect(result.regressions).toEqual(['tests/test_ops.py::test_mul']);
    // Attempt 1 passed every test that ran; the test it deleted is what stopped it.
    expect(result.attempts[0]!.passRate).toBeLessThan(1.0001);
    const reflector = h.llm.requests.filter(
      (r) => r.scenario === 'repo-py-regress' && r.agent === 'reflector',
    );
    const firstAnalysis = reflector
      .find((r) => r.turn === 0)!
      .messages.find((m) => m.role === 'user')!.content!;
    expect(firstAnalysis).toContain('tests/test_helper.py::test_helper');
    const secondCoder = h.llm.requests.find(
      (r) => r.scenario === 'repo-py-regress' && r.agent === 'coder' && r.turn === 1,
    )!;
    expect(secondCoder.messages.find((m) => m.role === 'user')!.content).toContain(
      'tests/test_helper.py::test_helper',
    );
  });

  test('Python: a .pyc and .GIT / git~1 folders a test writes never reach a commit, later commits still succeed, and apply asks before taking its link and binary', async () => {
    // No __pycache__ in .gitignore: the exclusion must not depend on the project's.
    const repo = makeRepo({
      ...PY_PROJECT,
      '.gitignore': '.venv/\n',
      'calc/util.py': 'def shout(text):\n    return text.upper()\n',
    });
    addVenv(repo, { 'helperlib.py': 'def answer():\n    return 42\n' });
    const id = newId('plant');
    const result = await run(repo, id, 'repo-py-plant');
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 2, error: null });

    const committed = gitIn(repo, 'ls-tree', '-r', '--name-only', `aca/${id}`).split('\n');
    expect(committed.filter((f) => /__pycache__|\.pyc$|\.git\/|git~1/i.test(f))).toEqual([]);
    expect(committed).toEqual(expect.arrayContaining(['calc/ops.py', 'tests/test_task.py']));
    const stat = await runCli(['diff', id, '--stat'], env);
    expect(stat.stdout).not.toMatch(/pyc/);
    expect(stat.stdout.split('Review with care:\n')[1]).toBe(
      [
        '  calc/native.so (binary, added): a new binary file: the diff cannot show it [aca apply needs --allow-binary]',
        '  calc/settings.cfg -> /etc/hostname (link, added): a link pointing outside the repository [aca apply needs --allow-links]',
        '',
      ].join('\n'),
    );
    const shown = await runCli(['result', id], env);
    expect(shown.stdout).toContain('Review with care:\n  calc/native.so (binary, added)');

    // Without the flags, apply refuses (2), naming both, and the repository stays as it was.
    const before = repoDigest(repo);
    const refused = await runCli(['apply', id], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('calc/settings.cfg -> /etc/hostname');
    expect(refused.stderr).toContain('calc/native.so');
    expect(repoDigest(repo)).toEqual(before);

    const applied = await runCli(['apply', id, '--allow-binary', '--allow-links'], env);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain('Review with care:\n  calc/native.so (binary, added)');
    expect(fs.readlinkSync(path.join(repo, 'calc', 'settings.cfg'))).toBe('/etc/hostname');
    expect(fs.existsSync(path.join(repo, 'calc', '__pycache__'))).toBe(false);
    expect(fs.existsSync(path.join(repo, '.GIT'))).toBe(false);
  });

  test("Python: links a test leaves into the checkout's .git, or into another git directory, are named and need --allow-links", async () => {
    const repo = pythonRepo();
    const id = newId('gitlinks');
    const result = await run(repo, id, 'repo-py-gitlinks');
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 2, error: null });

    const into = 'a link into a git directory (.git), outside the repository [aca apply needs --allow-links]';
    const stat = await runCli(['diff', id, '--stat'], env);
    expect(stat.stdout.split('Review with care:\n')[1]).toBe(
      [
        `  calc/store -> ../calc/../.git/objects (link, added): ${into}`,
        `  dotgit -> ./.GIT (link, added): ${into}`,
        '  fake (git-directory, added): a folder laid out as a git directory: git run in it reads its config and hooks',
        `  gitconfig -> .git/config (link, added): ${into}`,
        `  hop -> dotgit/hooks (link, added): ${into}`,
        `  tools/hooks -> ../.git/hooks (link, added): ${into}`,
        `  vendor -> fake (link, added): ${into}`,
        '',
      ].join('\n'),
    );

    // Without --allow-links, apply refuses (2), naming each, and the repository stays as it was.
    const before = repoDigest(repo);
    const refused = await runCli(['apply', id], env);
    expect(refused.code).toBe(2);
    for (const link of ['tools/hooks -> ../.git/hooks', 'gitconfig -> .git/config', 'vendor -> fake']) {
      expect(refused.stderr).toContain(link);
    }
    expect(repoDigest(repo)).toEqual(before);

    const applied = await runCli(['apply', id, '--allow-links'], env);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(
      `  tools/hooks -> ../.git/hooks (link, added): a link into a git directory`,
    );
    expect(fs.readlinkSync(path.join(repo, 'tools', 'hooks'))).toBe('../.git/hooks');
  });

  test('TypeScript with its own Jest config and node_modules', async () => {
    const repo = makeRepo({
      '.gitignore': 'node_modules/\n',
      'package.json': JSON.stringify({ name: 'slugs', private: true, scripts: { test: 'jest' } }),
      'jest.config.js':
        "module.exports = { testEnvironment: 'node', transform: { '^.+\\\\.ts$': '<rootDir>/ts-transform.js' }, moduleFileExtensions: ['ts', 'js'] };\n",
      'ts-transform.js':
        "const ts = require('typescript');\nmodule.exports = { process(src, file) { return { code: ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 }, fileName: file }).outputText }; } };\n",
      'src/slug.ts':
        "export function slug(text: string): string {\n  return text.toLowerCase().replace(/ /g, '_');\n}\n",
      'src/slug.test.ts':
        "import { slug } from './slug';\n\ntest('dashes', () => {\n  expect(slug('Hello World')).toBe('hello-world');\n});\n\ntest('lower case', () => {\n  expect(slug('ABC')).toBe('abc');\n});\n",
    });
    addNodeModules(repo);
    const id = newId('ts');
    const result = await run(repo, id, 'repo-ts-jest', '--language', 'typescript');
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 1, baseline: { passed: 1, failed: 1 } });
    expect(result.tests).toEqual({ passed: 2, failed: 0, errors: 0 });
  });

  test('JavaScript with Vitest', async () => {
    const repo = makeRepo({
      '.gitignore': 'node_modules/\n',
      'package.json': JSON.stringify({
        name: 'words',
        private: true,
        type: 'module',
        scripts: { test: 'vitest run' },
      }),
      'src/words.js': 'export function words(text) {\n  return text.split(",").filter(Boolean);\n}\n',
      'src/words.test.js':
        "import { expect, test } from 'vitest';\nimport { words } from './words.js';\n\ntest('splits on spaces', () => {\n  expect(words('a b c')).toEqual(['a', 'b', 'c']);\n});\n\ntest('empty', () => {\n  expect(words('')).toEqual([]);\n});\n",
    });
    addNodeModules(repo);
    const id = newId('vitest');
    const result = await run(repo, id, 'repo-js-vitest', '--language', 'javascript');
    expect(result).toMatchObject({ state: 'SUCCESS', iterations: 1, baseline: { passed: 1, failed: 1 } });
    expect(result.tests).toEqual({ passed: 2, failed: 0, errors: 0 });
  });

  test('a custom command that writes JUnit XML to $ACA_JUNIT_XML, and one judged by its exit status', async () => {
    const script = [
      'status=failure',
      'grep -q fixed status.txt 2>/dev/null && status=ok',
      'if [ "$status" = ok ]; then case=\'<testcase classname="checks" name="status"/>\'; else case=\'<testcase classname="checks" name="status"><failure message="not fixed"/></testcase>\'; fi',
      'printf \'<testsuites><testsuite name="checks"><testcase classname="checks" name="always"/>%s</testsuite></testsuites>\' "$case" > "$ACA_JUNIT_XML"',
      '[ "$status" = ok ]',
      '',
    ].join('\n');
    const repo = makeRepo({ 'check.sh': script, 'status.txt': 'broken\n' });
    const junit = await run(repo, newId('junit'), 'repo-command', '--test-cmd', 'sh check.sh');
    expect(junit).toMatchObject({ state: 'SUCCESS', baseline: { passed: 1, failed: 1 } });
    expect(junit.tests).toEqual({ passed: 2, failed: 0, errors: 0 });

    const exitOnly = makeRepo({
      '.aca.json': JSON.stringify({ testCommand: 'grep -q fixed status.txt' }),
      'status.txt': 'broken\n',
    });
    const byStatus = await run(exitOnly, newId('exit'), 'repo-command');
    expect(byStatus).toMatchObject({ state: 'SUCCESS', baseline: { passed: 0, failed: 1 } });
    expect(byStatus.tests).toEqual({ passed: 1, failed: 0, errors: 0 });
  });

  test('a setup command that fails ends the run FAILED error with its output, before any model call', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const id = newId('setup');
    const calls = h.llm.requests.length;
    const result = await run(
      repo,
      id,
      'repo-command',
      '--test-cmd',
      'true',
      '--setup-cmd',
      'echo preparing; echo no such tool >&2; exit 3',
    );
    expect(result).toMatchObject({ state: 'FAILED', reason: 'error' });
    await h.recordHistory(h.client.workflow.getHandle(id), 'repo-setup-failed');
    expect(result.error).toContain('no such tool');
    expect(h.llm.requests.slice(calls).filter((r) => r.scenario === 'repo-command')).toHaveLength(0);
  });

  test.each([
    [
      'a folder outside any repository',
      (dir: string) => ['--repo', path.dirname(dir)],
      /not in a git work tree/,
    ],
    ['an unknown --base', (dir: string) => ['--repo', dir, '--base', 'nope'], /names no commit/],
    ['an empty --test-cmd', (dir: string) => ['--repo', dir, '--test-cmd', ''], /--test-cmd is empty/],
    [
      'a .aca.json with unknown keys',
      (dir: string) => {
        writeFiles(dir, { '.aca.json': '{"tests": "x"}' });
        gitIn(dir, 'add', '.aca.json');
        gitIn(dir, 'commit', '--quiet', '-m', 'config');
        return ['--repo', dir];
      },
      /unknown key\(s\) tests/,
    ],
    [
      'a .aca.json asking for 1 TiB of memory',
      (dir: string) => {
        writeFiles(dir, { '.aca.json': '{"limits": {"memoryMiB": 1048576}}' });
        gitIn(dir, 'add', '.aca.json');
        gitIn(dir, 'commit', '--quiet', '-m', 'config');
        return ['--repo', dir];
      },
      /limits\.memoryMiB is 1048576, above the most a run may have \(4096, set by ACA_MAX_MEMORY_MIB\)/,
    ],
    [
      'a .aca.json asking for a day of wall time',
      (dir: string) => {
        writeFiles(dir, { '.aca.json': '{"limits": {"wallTimeSeconds": 86400}}' });
        gitIn(dir, 'add', '.aca.json');
        gitIn(dir, 'commit', '--quiet', '-m', 'config');
        return ['--repo', dir];
      },
      /limits\.wallTimeSeconds is 86400, above the most a run may have \(1800, set by ACA_MAX_WALL_SECONDS\)/,
    ],
  ])('bad input: %s is one clear line, exit 2, nothing started', async (_label, args, message) => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const extra = args(repo);
    const before = repoDigest(repo);
    const id = newId('bad');
    const r = await runCli(['run', 'do it', '--id', id, ...extra], env);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(repoDigest(repo)).toEqual(before);
    expect((await runCli(['status', id], env)).code).toBe(2);
  });
});
