import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  git,
  GitError,
  readProjectConfigAt,
  writeBaseTestConfig,
  writeBaseTestFiles,
  writeBaseTestHelpers,
  type GitTarget,
} from '../repo';
import { detectTestCommand, runTestSuite, type BaseTests, type SandboxLimits } from '../sandbox';
import { readPytestCommand } from './pytest-command';
import type { InstanceStatus } from '../shared/eval-types';
import type { ProjectLimits, TestCommandSpec } from '../shared/test-command';
import type { Language, SandboxMode, TestRunReport } from '../shared/types';
import { patchFiles, type EvalInstance } from './instances';
import { judgeIds, pytestNodeId, shellQuote, type TestVerdict } from './test-ids';
import type { RepoSpec } from './specs';

export interface EvaluationInput {
  instance: EvalInstance;
  /** aca's copy of the instance's repository (see repositories.ts): read only. */
  repoPath: string;
  baseCommit: string;
  language: Language;
  modelPatch: string;
  /** `--specs`: the repository's setup command, variables and test command (without a `test_cmd`). */
  spec?: RepoSpec | null;
  sandboxMode: SandboxMode;
  /** The sandbox's limits for the base commit's `.aca.json` limits, held to the worker's maximums. */
  limitsOf: (project: ProjectLimits | undefined) => Partial<SandboxLimits>;
  heartbeat?: () => void;
  heartbeatEveryMs?: number;
  signal?: AbortSignal;
}

export interface Evaluation {
  status: InstanceStatus;
  reason: string | null;
  tests: { FAIL_TO_PASS: TestVerdict; PASS_TO_PASS: TestVerdict } | null;
  testCommand: string | null;
  testOutcome: TestRunReport['outcome'] | null;
  /** The end of the test command's output, for people looking into an unresolved instance. */
  outputTail: string | null;
  durationMs: number;
}

const PYTEST = /\bpytest\b/;

/**
 * Evaluates a patch as SWE-bench does: a fresh tree at the base commit (its git directory kept
 * outside it, the repository copy only read), the model's patch applied, the files the test patch
 * touches put back as at the base, the test patch applied, the test command run in the sandbox.
 * Resolved when every FAIL_TO_PASS and PASS_TO_PASS test passes.
 */
export async function evaluateInstance(input: EvaluationInput): Promise<Evaluation> {
  const started = Date.now();
  const { instance } = input;
  const ended = (
    status: InstanceStatus,
    reason: string | null,
    rest: Partial<Evaluation> = {},
  ): Evaluation => ({
    status,
    reason,
    tests: null,
    testCommand: null,
    testOutcome: null,
    outputTail: null,
    durationMs: Date.now() - started,
    ...rest,
  });
  if (input.modelPatch.trim() === '') return ended('empty_patch', 'the patch is empty');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-eval-'));
  try {
    const tree = path.join(dir, 'tree');
    fs.mkdirSync(tree);
    const target: GitTarget = { gitDir: path.join(dir, 'git'), workTree: tree };
    await git({ gitDir: target.gitDir }, ['init', '--quiet']);
    fs.writeFileSync(
      path.join(target.gitDir, 'objects', 'info', 'alternates'),
      `${path.join(input.repoPath, '.git', 'objects')}\n`,
    );
    await git(target, ['read-tree', '--reset', '-u', '--end-of-options', input.baseCommit]);
    const modelApplied = await applyPatch(target, dir, 'model.patch', input.modelPatch);
    if (modelApplied) return ended('unresolved', `the patch does not apply: ${modelApplied}`);
    // The test files as at the base, whatever the model's patch did to them, then the test patch.
    const testFiles = patchFiles(instance.test_patch);
    for (const file of testFiles) {
      const atBase = await git(target, [
        'ls-tree',
        '--name-only',
        '--full-tree',
        input.baseCommit,
        '--',
        file,
      ]);
      // Paths are the tree's: git runs from its top (from elsewhere `apply` and `rm` misplace them).
      if (atBase.trim()) await git(target, ['-C', tree, 'checkout', input.baseCommit, '--', file]);
      else await git(target, ['-C', tree, 'rm', '-r', '-f', '--quiet', '--ignore-unmatch', '--', file]);
    }
    const testApplied = await applyPatch(target, dir, 'test.patch', instance.test_patch);
    if (testApplied) return ended('error', `the test patch does not apply: ${testApplied}`);
    const config = await readProjectConfigAt({ gitDir: target.gitDir }, input.baseCommit, input.repoPath);
    // The tests as the base commit and the test patch have them, whatever the model's patch holds:
    // the verdict process judges these, loading only their own conftest.py files and configuration.
    const trusted = await trustedTree(input, dir);
    if (typeof trusted === 'string') return ended('error', `the test patch does not apply: ${trusted}`);
    const spec = input.spec ?? null;
    const env = spec && Object.keys(spec.env).length > 0 ? { env: spec.env } : {};
    const limits = input.limitsOf(config.limits);
    const sandboxed = {
      ...(input.heartbeat ? { heartbeat: input.heartbeat } : {}),
      ...(input.heartbeatEveryMs ? { heartbeatEveryMs: input.heartbeatEveryMs } : {}),
      ...(input.signal ? { signal: input.signal } : {}),
    };
    if (spec?.setupCommand) {
      // As a run's setup command: in the sandbox, in the tree, without the network.
      const setup = await runTestSuite({
        workspace: tree,
        language: input.language,
        mode: input.sandboxMode,
        command: { kind: 'command', command: spec.setupCommand, source: 'option', label: spec.setupCommand },
        limits,
        ...env,
        ...sandboxed,
      });
      if (setup.outcome !== 'completed' || setup.failed > 0 || setup.errors > 0) {
        const tail = setup.output.trimEnd().split('\n').slice(-5).join(' | ').slice(-500);
        return ended(
          'error',
          `the setup command failed (${setup.outcome}${setup.message ? `: ${setup.message.slice(0, 200)}` : ''})${tail ? `: ${tail}` : ''}`,
          {
            testCommand: spec.setupCommand,
            testOutcome: setup.outcome,
            outputTail: setup.output.slice(-4000),
          },
        );
      }
    }
    const verdict =
      spec?.testCommand && !instance.test_cmd
        ? null
        : verdictCommandFor(instance, trusted.tree, input.language, testFiles);
    const { command, testPaths } = verdict
      ? {
          command: { kind: 'pytest', command: null, source: 'option', label: verdict.label } as const,
          testPaths: verdict.files,
        }
      : testCommandFor(instance.test_cmd ?? spec?.testCommand ?? null, tree, input.language, testFiles);
    // Every trusted test file is known to the verdict (a test class may inherit another file's),
    // the command's are run.
    const baseTests: BaseTests | undefined = verdict
      ? {
          sourceDir: path.join(dir, 'trusted-tests'),
          files: await writeBaseTestFiles(
            { gitDir: trusted.gitDir },
            trusted.treeId,
            path.join(dir, 'trusted-tests'),
            verdict.files,
          ),
          run: verdict.files,
          helpers: await writeBaseTestHelpers(
            { gitDir: trusted.gitDir },
            trusted.treeId,
            path.join(dir, 'trusted-tests'),
          ),
          config: await writeBaseTestConfig(
            { gitDir: trusted.gitDir },
            trusted.treeId,
            path.join(dir, 'trusted-config'),
            [],
          ),
          importPaths: verdict.importPaths,
        }
      : undefined;
    const report = await runTestSuite({
      workspace: tree,
      language: input.language,
      mode: input.sandboxMode,
      command,
      limits,
      ...(testPaths.length ? { testPaths } : {}),
      ...(baseTests ? { baseTests } : {}),
      ...env,
      ...sandboxed,
    });
    const cases =
      command.kind === 'command' && PYTEST.test(command.label)
        ? report.cases.map((c) => ({ ...c, name: pytestNodeId(c.name, tree) }))
        : report.cases;
    const tests = {
      FAIL_TO_PASS: judgeIds(instance.FAIL_TO_PASS, cases),
      PASS_TO_PASS: judgeIds(instance.PASS_TO_PASS, cases),
    };
    const details = {
      tests,
      testCommand: command.label,
      testOutcome: report.outcome,
      outputTail: report.output.slice(-4000),
    };
    if (report.outcome === 'timeout') {
      return ended(
        'unresolved',
        `the test command timed out${report.message ? `: ${report.message}` : ''}`,
        details,
      );
    }
    if (report.outcome === 'sandbox_error') {
      return ended('error', `the sandbox failed: ${report.message ?? 'no message'}`, details);
    }
    const failing = [...tests.FAIL_TO_PASS.failure, ...tests.PASS_TO_PASS.failure];
    if (failing.length === 0) return ended('resolved', null, details);
    const more = failing.length > 3 ? ` and ${failing.length - 3} more` : '';
    const outcome = report.outcome === 'completed' ? '' : ` (the test run ended ${report.outcome})`;
    return ended('unresolved', `failing: ${failing.slice(0, 3).join(', ')}${more}${outcome}`, details);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A second tree at the base commit with only the test patch applied (its git directory beside it,
 * the repository copy only read): the trusted versions of the test files and their configuration.
 * `treeId` names its content for git. The reason when the test patch does not apply.
 */
async function trustedTree(
  input: EvaluationInput,
  dir: string,
): Promise<{ tree: string; gitDir: string; treeId: string } | string> {
  const tree = path.join(dir, 'trusted');
  fs.mkdirSync(tree);
  const target: GitTarget = { gitDir: path.join(dir, 'trusted-git'), workTree: tree };
  await git({ gitDir: target.gitDir }, ['init', '--quiet']);
  fs.writeFileSync(
    path.join(target.gitDir, 'objects', 'info', 'alternates'),
    `${path.join(input.repoPath, '.git', 'objects')}\n`,
  );
  await git(target, ['read-tree', '--reset', '-u', '--end-of-options', input.baseCommit]);
  const failed = await applyPatch(target, dir, 'trusted-test.patch', input.instance.test_patch);
  if (failed) return failed;
  return { tree, gitDir: target.gitDir, treeId: (await git(target, ['write-tree'])).trim() };
}

/**
 * The instance's tests as aca's verdict process runs them: the files its `test_cmd` names when that
 * is a plain pytest command (pytest-command.ts), else, without a `test_cmd`, the Python test files
 * the test patch touches when the repository's tests run with pytest. Null: the command runs as
 * written.
 */
function verdictCommandFor(
  instance: EvalInstance,
  trustedTree: string,
  language: Language,
  testFiles: string[],
): { files: string[]; importPaths: string[]; label: string } | null {
  if (language !== 'python') return null;
  const isFile = (file: string): boolean => {
    try {
      return fs.lstatSync(path.join(trustedTree, file)).isFile();
    } catch {
      return false;
    }
  };
  if (instance.test_cmd) {
    const read = readPytestCommand(instance.test_cmd);
    if (!read || !read.files.every(isFile)) return null;
    return { ...read, label: instance.test_cmd };
  }
  if (detectTestCommand(trustedTree, language, []).kind !== 'pytest') return null;
  const files = testFiles.filter((file) => file.endsWith('.py') && isFile(file));
  return files.length > 0 ? { files, importPaths: [], label: 'pytest' } : null;
}

/** Applies a patch to the tree and its index; the reason when it does not apply, else null. */
async function applyPatch(
  target: GitTarget,
  dir: string,
  name: string,
  patch: string,
): Promise<string | null> {
  if (patch.trim() === '') return null;
  const file = path.join(dir, name);
  fs.writeFileSync(file, patch.endsWith('\n') ? patch : `${patch}\n`);
  try {
    await git(target, ['-C', target.workTree!, 'apply', '--index', '--whitespace=nowarn', '--', file]);
    return null;
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    return (
      err.stderr.trim().split('\n').slice(0, 3).join('; ') || `git apply exited with ${String(err.exitCode)}`
    );
  }
}

/**
 * The instance's `test_cmd`, else its repository's `testCommand` of `--specs` (run with bash, with
 * a JUnit report asked of pytest), else the repository's detected runner on the test files the
 * test patch touches.
 */
function testCommandFor(
  given: string | null,
  tree: string,
  language: Language,
  testFiles: string[],
): { command: TestCommandSpec; testPaths: string[] } {
  if (given) {
    const line = PYTEST.test(given) ? `${given} --junitxml="$ACA_JUNIT_XML" -o junit_family=xunit1` : given;
    return {
      command: {
        kind: 'command',
        command: `bash -c ${shellQuote(line)}`,
        source: 'option',
        label: given,
      },
      testPaths: [],
    };
  }
  const existing = testFiles.filter((file) => {
    try {
      return fs.lstatSync(path.join(tree, file)).isFile();
    } catch {
      return false;
    }
  });
  return { command: detectTestCommand(tree, language, []), testPaths: existing };
}
