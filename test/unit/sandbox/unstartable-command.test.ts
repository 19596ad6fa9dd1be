/**
 * A test command that cannot start says so (`environment` on the report) instead of reading as
 * one failing test: a missing program (exit 127), and a Python module the command itself runs
 * with `-m` that Python cannot find. A test that imports a missing module still fails as a test.
 */
import { runTestSuite } from '../../../src/sandbox';
import type { TestRunReport } from '../../../src/shared/types';
import { makeWorkspace, removeWorkspaces } from '../../helpers/workspace-fixture';

afterAll(() => removeWorkspaces());

function run(command: string, files: Record<string, string> = {}): Promise<TestRunReport> {
  return runTestSuite({
    workspace: makeWorkspace(files),
    language: 'python',
    mode: 'bwrap',
    command: { kind: 'command', command, source: 'option', label: command },
  });
}

describe('a test command that cannot start', () => {
  test.each([
    ['python3 -m no_such_runner', 'no_such_runner'],
    ['python3 -m no_such_runner tests/ -q', 'no_such_runner'],
    ['cd . && python3 -B -m nosuchpkg.sub', 'nosuchpkg.sub'],
    ['python3 -m json.no_such_tool', 'json.no_such_tool'],
  ])('%s: no test ran, the environment is named', async (command, module) => {
    const report = await run(command);
    expect(report.cases).toEqual([]);
    expect(report.outcome).toBe('collection_error');
    expect(report.environment).toMatch(
      new RegExp(
        `^the test command could not start \\(Python has no module named ${module.replace('.', '\\.')}, exit 1\\)$`,
      ),
    );
    expect(report.message).toContain('No module named');
  });

  test('a missing program is named as before (exit 127)', async () => {
    const report = await run('no_such_program --all');
    expect(report.environment).toBe('the test command could not start (command not found, exit 127)');
  });

  test.each([
    // The module the command runs exists; a test of it imports one that does not.
    ['python3 -m unittest discover -s tests', { 'tests/test_x.py': 'import helperlib\n' }],
    // The command runs no module by -m; the script it runs lacks one.
    ['python3 check.py', { 'check.py': 'import no_such_runner\n' }],
    // Some other module than the one the command runs is said to be missing, by something else.
    ['python3 -m json.tool missing.json; echo "python3: No module named other" >&2; exit 1', {}],
  ])('%s: a failing test, not the environment', async (command, files) => {
    const report = await run(command, files);
    expect(report.environment).toBeUndefined();
    expect(report.failed).toBe(1);
    expect(report.cases).toEqual([
      expect.objectContaining({ name: `command::${command}`, status: 'failed' }),
    ]);
  });
});
