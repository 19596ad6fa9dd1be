import * as fs from 'node:fs';
import * as path from 'node:path';
import { releaseWorkspace, runTestSuite } from '../../../src/sandbox';
import type { DependencyFolder, TestCommandSpec, TestRunnerKind } from '../../../src/shared/test-command';
import type { TestRunReport } from '../../../src/shared/types';
import {
  linkNodeModules,
  makeRepo,
  makeVenv,
  removeRepos,
  treeFingerprint,
} from '../../helpers/project-fixture';
import { makeWorkspace, removeWorkspaces, snapshotOwners } from '../../helpers/workspace-fixture';

afterAll(() => {
  removeWorkspaces();
  removeRepos();
});

function spec(kind: TestRunnerKind, command: string | null = null): TestCommandSpec {
  return { kind, command, source: 'option', label: command ?? kind };
}

function statuses(report: TestRunReport): Record<string, string> {
  return Object.fromEntries(report.cases.map((c) => [c.name, c.status]));
}

/** The workspace's entries besides the dependency mount points, which stay as empty folders. */
function entries(ws: string): string[] {
  return fs.readdirSync(ws).sort();
}

function helperlibPath(venv: DependencyFolder): string {
  const lib = path.join(venv.hostPath, 'lib');
  return path.join(lib, fs.readdirSync(lib)[0], 'site-packages', 'helperlib.py');
}

describe('pytest with the repository virtual environment', () => {
  let venv: DependencyFolder;
  let before: string[];

  beforeAll(() => {
    venv = makeVenv(makeRepo(), { 'helperlib.py': 'def greet(name):\n    return f"hello {name}"\n' });
    // Writable by anyone on the host: only the read-only mount can stop the test writing it.
    fs.chmodSync(helperlibPath(venv), 0o666);
    before = treeFingerprint(venv.hostPath);
  });

  const TESTS = `
import os, sys
import helperlib

def test_helper_from_the_venv():
    assert helperlib.greet("ada") == "hello ada"

def test_runs_the_venv_interpreter():
    assert sys.prefix == "/workspace/.venv", sys.prefix

def test_write_into_the_venv():
    with open("/workspace/.venv/planted.py", "w") as f:
        f.write("x = 1")

def test_change_the_helper():
    with open(helperlib.__file__, "a") as f:
        f.write("# changed")
`;

  test('imports what the venv holds, with the venv mounted read-only', async () => {
    const ws = makeWorkspace({ 'tests/test_helper.py': TESTS });
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      command: spec('pytest'),
      dependencies: [venv],
    });
    expect(statuses(report)).toEqual({
      'tests/test_helper.py::test_helper_from_the_venv': 'passed',
      'tests/test_helper.py::test_runs_the_venv_interpreter': 'passed',
      'tests/test_helper.py::test_write_into_the_venv': 'failed',
      'tests/test_helper.py::test_change_the_helper': 'failed',
    });
    const messages = report.cases.filter((c) => c.status === 'failed').map((c) => c.message);
    for (const message of messages) expect(message).toMatch(/Read-only file system/);
    expect(treeFingerprint(venv.hostPath)).toEqual(before);
    // The mount point is all the run leaves in the workspace.
    expect(entries(ws)).toEqual(['.venv', 'tests']);
    expect(fs.readdirSync(path.join(ws, '.venv'))).toEqual([]);
  });

  test('without a command the run is as before: Debian python, no venv', async () => {
    const ws = makeWorkspace({ 'test_helper.py': 'def test_x():\n    import helperlib\n' });
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      dependencies: [venv],
    });
    expect(statuses(report)).toEqual({ 'test_helper.py::test_x': 'failed' });
    expect(report.cases[0].message).toMatch(/No module named 'helperlib'/);
  });

  test('without a sandbox the host venv is used where it is', async () => {
    const ws = makeWorkspace({
      'test_helper.py': `
import os, sys, helperlib

def test_helper():
    assert helperlib.greet("x") == "hello x"
    assert sys.prefix == ${JSON.stringify(venv.hostPath)}
    assert os.environ["PATH"].split(":")[0] == ${JSON.stringify(path.join(venv.hostPath, 'bin'))}
`,
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'none',
      command: spec('pytest'),
      dependencies: [venv],
    });
    expect(statuses(report)).toEqual({ 'test_helper.py::test_helper': 'passed' });
    expect(entries(ws)).toEqual(['test_helper.py']);
  });
});

describe('node runners of the project', () => {
  let nodeModules: DependencyFolder;

  beforeAll(() => {
    nodeModules = linkNodeModules(makeRepo());
  });

  const MATH_TS = 'export function add(a: number, b: number): number {\n  return a + b;\n}\n';
  const PROJECT_JEST: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'p', private: true, scripts: { test: 'jest' } }),
    // A match no default Jest configuration has: only the project's config finds these tests.
    'jest.config.js': `module.exports = {
  testEnvironment: 'node',
  testMatch: ['**/*.check.ts'],
  transform: { '^.+\\\\.ts$': '<rootDir>/ts-transform.js' },
};
`,
    'ts-transform.js': `const ts = require('typescript');
module.exports = {
  process(source, file) {
    const out = ts.transpileModule(source, {
      fileName: file,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    });
    return { code: out.outputText };
  },
};
`,
    'src/math.ts': MATH_TS,
    'src/math.check.ts': `import { add } from './math';

describe('add', () => {
  test('adds', () => {
    expect(add(1, 2)).toBe(3);
  });
  test('is wrong on purpose', () => {
    expect(add(2, 2)).toBe(5);
  });
});
`,
    'src/ignored.test.ts': "test('not matched by the project config', () => {});\n",
  };

  test("the project's Jest runs with the project's config and transformer", async () => {
    const ws = makeWorkspace(PROJECT_JEST);
    const report = await runTestSuite({
      workspace: ws,
      language: 'typescript',
      mode: 'bwrap',
      command: spec('jest'),
      dependencies: [nodeModules],
    });
    expect(report.outcome).toBe('completed');
    expect(statuses(report)).toEqual({
      'src/math.check.ts::add adds': 'passed',
      'src/math.check.ts::add is wrong on purpose': 'failed',
    });
    expect(report.cases.find((c) => c.status === 'failed')?.message).toContain('Expected: 5');
    expect(entries(ws)).toEqual(['jest.config.js', 'node_modules', 'package.json', 'src', 'ts-transform.js']);
  });

  test("without a sandbox the project's Jest finds the repository's packages through NODE_PATH", async () => {
    const ws = makeWorkspace(PROJECT_JEST);
    const report = await runTestSuite({
      workspace: ws,
      language: 'typescript',
      mode: 'none',
      command: spec('jest'),
      dependencies: [nodeModules],
    });
    expect(statuses(report)).toEqual({
      'src/math.check.ts::add adds': 'passed',
      'src/math.check.ts::add is wrong on purpose': 'failed',
    });
    expect(entries(ws)).toEqual(['jest.config.js', 'package.json', 'src', 'ts-transform.js']);
  });

  test('vitest runs once, with its config, and its JUnit cases are the result', async () => {
    const ws = makeWorkspace({
      'package.json': JSON.stringify({
        name: 'p',
        private: true,
        type: 'module',
        scripts: { test: 'vitest' },
      }),
      // TypeScript in an ES module package: vite bundles it to a temporary file in node_modules/.vite-temp.
      'vitest.config.ts': `import { defineConfig } from 'vitest/config';
const include: string[] = ['src/**/*.check.js'];
export default defineConfig({ test: { include } });
`,
      'src/math.js': 'export const add = (a, b) => a + b;\n',
      'src/math.check.js': `import { describe, expect, test } from 'vitest';
import { add } from './math.js';

describe('add', () => {
  test('adds', () => {
    expect(add(1, 2)).toBe(3);
  });
  test('is wrong on purpose', () => {
    expect(add(2, 2)).toBe(5);
  });
  test.skip('later', () => {});
});
test('top level', () => {});
`,
    });
    const owners = snapshotOwners(ws);
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'bwrap',
      command: spec('vitest'),
      dependencies: [nodeModules],
    });
    expect(report.outcome).toBe('completed');
    expect(statuses(report)).toEqual({
      'src/math.check.js::add > adds': 'passed',
      'src/math.check.js::add > is wrong on purpose': 'failed',
      'src/math.check.js::add > later': 'skipped',
      'src/math.check.js::top level': 'passed',
    });
    expect(report.cases.find((c) => c.status === 'failed')?.message).toMatch(/expected 4 to be 5/);
    expect(report.output).toMatch(/Tests\s+1 failed \| 2 passed \| 1 skipped/);
    // No cache or bundled config left behind, in the workspace or in the repository's node_modules.
    await releaseWorkspace(ws);
    expect(snapshotOwners(ws)).toEqual({ ...owners, node_modules: expect.any(String) });
    expect(fs.readdirSync(path.join(nodeModules.hostPath, '.vite-temp'))).toEqual([]);
    expect(fs.existsSync(path.join(nodeModules.hostPath, '.vite'))).toBe(false);
  });

  test('mocha runs with its own config, cases named by file and full title', async () => {
    const ws = makeWorkspace({
      '.mocharc.json': JSON.stringify({ spec: 'spec/**/*.spec.js' }),
      'lib/math.js': 'exports.add = (a, b) => a + b;\n',
      'spec/math.spec.js': `const assert = require('node:assert');
const { add } = require('../lib/math');

describe('add', () => {
  it('adds', () => assert.strictEqual(add(1, 2), 3));
  it('is wrong on purpose', () => assert.strictEqual(add(2, 2), 5));
  describe('with negatives', () => {
    it('still adds', () => assert.strictEqual(add(-1, 1), 0));
  });
});
`,
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'bwrap',
      command: spec('mocha'),
      dependencies: [nodeModules],
    });
    expect(statuses(report)).toEqual({
      'spec/math.spec.js::add adds': 'passed',
      'spec/math.spec.js::add is wrong on purpose': 'failed',
      'spec/math.spec.js::add with negatives still adds': 'passed',
    });
    expect(report.cases.find((c) => c.status === 'failed')?.message).toMatch(/4 !== 5/);
  });

  test('a runner the project names but has not installed is a clear failure', async () => {
    const ws = makeWorkspace({ 'a.test.js': '' });
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'bwrap',
      command: spec('vitest'),
      dependencies: [],
    });
    expect(report.outcome).toBe('collection_error');
    expect(report.message).toMatch(/vitest is not installed in the repository's node_modules/);
  });

  test('the mounted node_modules cannot be written from inside', async () => {
    const ws = makeWorkspace({
      'test/write.test.js': `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');

test('plant a file', () => {
  assert.throws(() => fs.writeFileSync('/workspace/node_modules/planted.js', 'x'), /EROFS/);
});
test('remove a package', () => {
  assert.throws(() => fs.rmSync('/workspace/node_modules/jest', { recursive: true }), /EROFS|EBUSY/);
});
test('replace the folder', () => {
  assert.throws(() => fs.renameSync('/workspace/node_modules', '/workspace/moved'), /EBUSY|EROFS/);
});
`,
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'bwrap',
      command: spec('node-test'),
      dependencies: [nodeModules],
    });
    expect(statuses(report)).toEqual({
      'test::plant a file': 'passed',
      'test::remove a package': 'passed',
      'test::replace the folder': 'passed',
    });
    expect(fs.existsSync(path.join(nodeModules.hostPath, 'planted.js'))).toBe(false);
    expect(fs.existsSync(path.join(nodeModules.hostPath, 'jest', 'package.json'))).toBe(true);
  });

  test('npm test runs inside the sandbox with node and the project bin folder on PATH', async () => {
    const ws = makeWorkspace({
      'package.json': JSON.stringify({
        name: 'p',
        private: true,
        scripts: { test: 'mocha --version && node --test' },
      }),
      'test/ok.test.js': "require('node:test')('ok', () => {});\n",
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'bwrap',
      command: spec('command', 'npm test'),
      dependencies: [nodeModules],
    });
    expect(statuses(report)).toEqual({ 'command::npm test': 'passed' });
    expect(report.output).toMatch(/^12\.\d+\.\d+$/m);
  });
});

describe('node --test', () => {
  test('runs the files it finds; suites name the cases', async () => {
    const ws = makeWorkspace({
      'test/math.test.js': `const { describe, it, test } = require('node:test');
const assert = require('node:assert');

test('adds', () => assert.strictEqual(1 + 1, 2));
test('is wrong on purpose', () => assert.strictEqual(2 + 2, 5));
describe('group', () => {
  it('inner', () => {});
  it.skip('later', () => {});
});
`,
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'bwrap',
      command: spec('node-test'),
    });
    expect(statuses(report)).toEqual({
      'test::adds': 'passed',
      'test::is wrong on purpose': 'failed',
      'test::group > inner': 'passed',
      'test::group > later': 'skipped',
    });
    expect(report.output).toMatch(/✖ is wrong on purpose/);
  });

  test('a file that does not load is a failed case named by its workspace path', async () => {
    const ws = makeWorkspace({
      'test/ok.test.js': "require('node:test')('ok', () => {});\n",
      'test/broken.test.js': "throw new Error('boom at load');\n",
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'bwrap',
      command: spec('node-test'),
    });
    expect(statuses(report)).toEqual({ 'test::ok': 'passed', 'test::test/broken.test.js': 'failed' });
    expect(report.passRate).toBe(0.5);
  });
});

describe('a command line', () => {
  test('its JUnit report at $ACA_JUNIT_XML gives the cases', async () => {
    const ws = makeWorkspace({
      'check.sh': `#!/bin/sh
cat > "$ACA_JUNIT_XML" <<EOF
<testsuites><testsuite name="checks">
<testcase classname="/workspace/checks/lint.sh" name="style"/>
<testcase classname="checks.unit" name="math"><failure message="2 + 2 is not 5">trace</failure></testcase>
<testcase name="bare"><skipped/></testcase>
</testsuite></testsuites>
EOF
exit 1
`,
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      command: spec('command', 'sh check.sh'),
    });
    expect(report.outcome).toBe('completed');
    expect(statuses(report)).toEqual({
      'checks/lint.sh::style': 'passed',
      'checks.unit::math': 'failed',
      bare: 'skipped',
    });
    expect(report.cases.find((c) => c.status === 'failed')?.message).toBe('2 + 2 is not 5\ntrace');
  });

  test('without a report its exit status is one test', async () => {
    const ws = makeWorkspace({ 'check.sh': 'echo checking\nexit "$1"\n' });
    const run = (command: string) =>
      runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap', command: spec('command', command) });

    const passed = await run('sh check.sh 0');
    expect(passed.outcome).toBe('completed');
    expect(passed.passRate).toBe(1);
    expect(passed.cases).toEqual([{ name: 'command::sh check.sh 0', status: 'passed' }]);

    const failed = await run('sh check.sh 1');
    expect(failed.passRate).toBe(0);
    expect(failed.cases).toEqual([
      {
        name: 'command::sh check.sh 1',
        status: 'failed',
        message: 'the command exited with code 1:\nchecking',
      },
    ]);
  });

  test('a report that shows only passes while the command failed is not a pass', async () => {
    const ws = makeWorkspace({});
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      command: spec(
        'command',
        `echo '<testsuite name="s"><testcase classname="c" name="ok"/></testsuite>' > "$ACA_JUNIT_XML"; echo crashed after the tests; exit 3`,
      ),
    });
    expect(report.outcome).toBe('collection_error');
    expect(report.passRate).toBe(0);
    expect(report.message).toMatch(
      /exited with code 3, yet its report shows no failing test[\s\S]*crashed after/,
    );
  });

  test('runs bare too', async () => {
    const ws = makeWorkspace({});
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'none',
      command: spec('command', 'test "$ACA_JUNIT_XML" != "" && node --version'),
    });
    expect(report.cases).toEqual([
      { name: 'command::test "$ACA_JUNIT_XML" != "" && node --version', status: 'passed' },
    ]);
  });
});

describe('hostile runs', () => {
  let projectNodeModules: DependencyFolder;

  beforeAll(() => {
    projectNodeModules = linkNodeModules(makeRepo());
  });

  test("a command's 64 MiB report is refused before it is parsed", async () => {
    const ws = makeWorkspace({});
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      command: spec(
        'command',
        `{ printf '<testsuites><testsuite name="s">'; yes '<testcase classname="a" name="b"/>' | head -c 67108000; printf '</testsuite></testsuites>'; } > "$ACA_JUNIT_XML"`,
      ),
    });
    expect(report.outcome).toBe('limit_exceeded');
    expect(report.message).toMatch(/the report is \d+ bytes, over the limit/);
    expect(report.passRate).toBe(0);
  });

  test("the project's Jest report is still cross-checked against aca's reporter", async () => {
    const ws = makeWorkspace({
      'jest.config.js': "module.exports = { testEnvironment: 'node' };\n",
      'forge.test.js': `const fs = require('fs');
const timers = require('timers');
// Rewrites Jest's report once Jest has written it, after the run: every failure becomes a pass.
timers.setTimeout(() => {
  const file = '/aca-out/report.json';
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const suite of report.testResults) {
    suite.status = 'passed';
    for (const a of suite.assertionResults) Object.assign(a, { status: 'passed', failureMessages: [] });
  }
  fs.writeFileSync(file, JSON.stringify({ ...report, success: true }));
}, 1500);
test('fails on its merits', () => expect(1).toBe(2));
`,
    });
    const report = await runTestSuite({
      workspace: ws,
      language: 'javascript',
      mode: 'bwrap',
      command: spec('jest'),
      dependencies: [projectNodeModules],
    });
    expect(report.outcome).toBe('tampered');
    expect(report.message).toMatch(/forge\.test\.js::fails on its merits failed, but the report says passed/);
  });

  test('a command cannot write into a dependency folder', async () => {
    const venv = makeVenv(makeRepo(), { 'helperlib.py': 'VALUE = 1\n' });
    const before = treeFingerprint(venv.hostPath);
    const ws = makeWorkspace({});
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      command: spec('command', 'echo planted > .venv/planted.txt || exit 7; touch .venv/pyvenv.cfg'),
      dependencies: [venv],
    });
    expect(report.cases).toEqual([
      {
        name: expect.stringMatching(/^command::/),
        status: 'failed',
        message: expect.stringMatching(/exited with code 7[\s\S]*Read-only file system/),
      },
    ]);
    expect(treeFingerprint(venv.hostPath)).toEqual(before);
  });

  test('a link planted at a mount point is replaced, never followed', async () => {
    const venv = makeVenv(makeRepo(), {});
    const outside = makeRepo();
    const ws = makeWorkspace({});
    fs.symlinkSync(outside, path.join(ws, '.venv'));
    const report = await runTestSuite({
      workspace: ws,
      language: 'python',
      mode: 'bwrap',
      command: spec('command', 'test -f .venv/pyvenv.cfg'),
      dependencies: [venv],
    });
    expect(report.passRate).toBe(1);
    expect(fs.lstatSync(path.join(ws, '.venv')).isDirectory()).toBe(true);
    expect(fs.readdirSync(outside)).toEqual([]);
  });
});

describe('bad dependency folders', () => {
  test.each([
    ['/abs', /must be a plain path relative to the repository/],
    ['../up', /must be a plain path relative to the repository/],
    ['a/../b', /must be a plain path relative to the repository/],
    ['-rf', /must be a plain path relative to the repository/],
  ])('%s is refused', async (relative, message) => {
    const ws = makeWorkspace({});
    await expect(
      runTestSuite({
        workspace: ws,
        language: 'python',
        mode: 'bwrap',
        dependencies: [{ relative, hostPath: makeRepo() }],
      }),
    ).rejects.toThrow(message);
  });

  test('more folders than mount points, a missing host folder and a link are refused', async () => {
    const ws = makeWorkspace({});
    const repo = makeRepo();
    const folders = ['a', 'b', 'c', 'd', 'e'].map((name) => {
      fs.mkdirSync(path.join(repo, name));
      return { relative: name, hostPath: path.join(repo, name) };
    });
    const run = (dependencies: DependencyFolder[]) =>
      runTestSuite({ workspace: ws, language: 'python', mode: 'bwrap', dependencies });
    await expect(run(folders)).rejects.toThrow(/at most 4 dependency folders/);
    await expect(run([{ relative: 'x', hostPath: path.join(repo, 'missing') }])).rejects.toThrow(/is not at/);
    fs.symlinkSync(path.join(repo, 'a'), path.join(repo, 'link'));
    await expect(run([{ relative: 'x', hostPath: path.join(repo, 'link') }])).rejects.toThrow(/not a link/);
    await expect(run([folders[0], { relative: 'a/b', hostPath: folders[1].hostPath }])).rejects.toThrow(
      /overlap/,
    );
  });
});
