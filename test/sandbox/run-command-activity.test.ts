/**
 * The runCommand activity on the host that holds the run's files: a call runs once (a retry
 * answers from the conversation), its whole output goes to the report store, bad arguments are an
 * answer, and the hostile cases that depend on the turn (a Planner's read-only work tree, the
 * turn's protected files, the worker's secrets) are contained when reached this way too.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import {
  createCommandActivities,
  WHOLE_OUTPUTS_PER_TURN,
  type CommandCallOutcome,
} from '../../src/activities/command-activities';
import { createRepoActivities, type PreparedRun } from '../../src/activities/repo-activities';
import { git, HostRuns, parseGitStoreLocation } from '../../src/repo';
import type { RunPlace } from '../../src/shared/run-types';
import type { AgentRole, SandboxMode } from '../../src/shared/types';
import { FileConversationStore } from '../../src/store/conversation-store';
import { FileReportStore } from '../../src/store/report-store';
import { MARK, SECRET, watchHost } from '../helpers/escape-host';
import { tempDirs } from '../helpers/temp-dirs';

watchHost();
const tempDir = tempDirs('aca-run-command-activity-');
const author = { name: 'aca', email: 'aca@localhost' };
const REF = 'wf-cmd/run/coder-1';

interface Setup {
  place: RunPlace;
  conversations: FileConversationStore;
  reports: FileReportStore;
  workTree: string;
  call(toolCallId: string): Promise<CommandCallOutcome>;
  /**
   * A conversation of `role` whose last answer asked for these run_command calls (id, arguments);
   * `offered`: whether the turn was offered run_command when it opened.
   */
  askedFor(
    role: AgentRole,
    calls: Array<[string, unknown]>,
    protectedPaths?: string[],
    offered?: boolean,
  ): Promise<void>;
}

/**
 * A run of its own; `withStore`: its branch kept in a git store, so each Coder command is committed;
 * `runCommand`: the worker's ACA_RUN_COMMAND; `sandboxMode`: the worker's ACA_SANDBOX.
 */
async function preparedRun({
  withStore = false,
  runCommand = true,
  sandboxMode = 'bwrap' as SandboxMode,
} = {}): Promise<Setup> {
  const home = tempDir();
  let store: ReturnType<typeof parseGitStoreLocation> | null = null;
  if (withStore) {
    const storeDir = path.join(home, 'store.git');
    execFileSync('git', ['init', '--bare', '--quiet', storeDir], {
      env: {
        PATH: process.env.PATH,
        HOME: '/nonexistent',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
      },
    });
    store = parseGitStoreLocation(storeDir, '/unused');
  }
  const host = new HostRuns({ store, home, workspacesRoot: path.join(home, 'workspaces'), author });
  const repo = createRepoActivities({ gitAuthor: author, sandboxMode: 'none', gitStore: store, host });
  const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  const prepared = (await env.run(repo.prepareRun, {
    workflowId: 'wf-cmd',
    workspace: path.join(home, 'workspaces', 'wf-cmd'),
    language: 'python' as const,
    repo: null,
    testCommand: null,
    setupCommand: null,
  })) as PreparedRun;
  const place: RunPlace = prepared.place;
  const headCommit = prepared.startCommit;
  const conversations = new FileConversationStore(path.join(home, 'conversations'));
  const reports = new FileReportStore(path.join(home, 'conversations'));
  const activities = createCommandActivities({
    store: conversations,
    reports,
    host,
    sandboxMode,
    runCommand,
  });
  return {
    place,
    conversations,
    reports,
    workTree: place.workTree,
    call: (toolCallId) =>
      env.run(activities.runCommand, {
        ref: REF,
        toolCallId,
        place,
        headCommit,
        execution: 'run',
      }) as Promise<CommandCallOutcome>,
    askedFor: (role, calls, protectedPaths = [], offered = true) =>
      conversations.save({
        ref: REF,
        role,
        model: 'stub',
        language: 'python',
        workspace: place.workTree,
        protectedPaths,
        entries: [
          { kind: 'system', content: role },
          { kind: 'user', content: 'look around' },
          {
            kind: 'assistant',
            content: null,
            toolCalls: calls.map(([id, args]) => ({
              id,
              name: 'run_command',
              arguments: typeof args === 'string' ? args : JSON.stringify(args),
            })),
          },
        ],
        toolResults: {},
        steps: [],
        offered: { runCommand: offered, mcp: [] },
      }),
  };
}

describe('runCommand', () => {
  test('runs once, answers with both streams, and keeps the whole output in the report store', async () => {
    const setup = await preparedRun();
    await setup.askedFor('coder', [
      ['c1', { command: 'echo ran >> count.txt; echo out; echo err >&2; exit 3' }],
    ]);
    const first = await setup.call('c1');
    expect(first).toMatchObject({
      ok: true,
      command: {
        line: expect.stringContaining('echo ran'),
        exitCode: 3,
        timedOut: false,
        stdoutTail: 'out',
        stderrTail: 'err',
      },
    });
    const answer = (await setup.conversations.load(REF)).toolResults.c1 as Record<string, unknown>;
    expect(answer).toMatchObject({
      ok: true,
      exit_code: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      timed_out: false,
    });
    expect(typeof answer.duration_ms).toBe('number');
    const stored = await setup.reports.loadCommandOutput(String(answer.output_ref));
    expect(stored).toMatchObject({ kind: 'command-output', exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
    // A Coder's command changes the work tree.
    expect(fs.readFileSync(path.join(setup.workTree, 'count.txt'), 'utf8')).toBe('ran\n');
    // A retry answers from the conversation: the command does not run a second time.
    expect(await setup.call('c1')).toEqual(first);
    expect(fs.readFileSync(path.join(setup.workTree, 'count.txt'), 'utf8')).toBe('ran\n');
  });

  test('bad arguments are an answer, and nothing runs', async () => {
    const setup = await preparedRun();
    await setup.askedFor('coder', [
      ['c1', { command: 'touch made.txt', cwd: '/' }],
      ['c2', { command: 'touch made.txt', timeout_seconds: 100000 }],
      ['c3', '{"command": '],
    ]);
    for (const id of ['c1', 'c2', 'c3']) {
      const outcome = await setup.call(id);
      expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/arguments/) });
      expect(outcome.command).toBeUndefined();
    }
    expect(fs.existsSync(path.join(setup.workTree, 'made.txt'))).toBe(false);
  });

  test('a turn not offered run_command, or a worker with ACA_RUN_COMMAND=off, runs no command', async () => {
    const notOffered = await preparedRun();
    await notOffered.askedFor('coder', [['c1', { command: 'touch made.txt' }]], [], false);
    const switchedOff = await preparedRun({ runCommand: false });
    await switchedOff.askedFor('coder', [['c1', { command: 'touch made.txt' }]]);
    for (const [setup, why] of [
      [notOffered, /not among the tools of this turn/],
      [switchedOff, /ACA_RUN_COMMAND=off/],
    ] as const) {
      expect(await setup.call('c1')).toMatchObject({ ok: false, error: expect.stringMatching(why) });
      expect(fs.existsSync(path.join(setup.workTree, 'made.txt'))).toBe(false);
    }
  });

  test("a Planner's command sees the work tree read-only", async () => {
    const setup = await preparedRun();
    fs.writeFileSync(path.join(setup.workTree, 'a.txt'), 'a\n');
    await setup.askedFor('planner', [
      ['c1', { command: 'cat a.txt; echo changed > a.txt; rm -f a.txt; touch b.txt' }],
    ]);
    const outcome = await setup.call('c1');
    expect(outcome).toMatchObject({ ok: true, command: { stdoutTail: 'a' } });
    expect(outcome.command?.stderrTail).toContain('Read-only file system');
    expect(fs.readFileSync(path.join(setup.workTree, 'a.txt'), 'utf8')).toBe('a\n');
    expect(fs.existsSync(path.join(setup.workTree, 'b.txt'))).toBe(false);
  });

  // Nothing but a sandbox mounts the work tree read-only: run bare, their commands could write it.
  test.each<AgentRole>(['planner', 'reflector'])(
    "without a sandbox, a %s's command is refused, saying why, and nothing of it runs",
    async (role) => {
      const setup = await preparedRun({ sandboxMode: 'none' });
      fs.writeFileSync(path.join(setup.workTree, 'a.txt'), 'a\n');
      await setup.askedFor(role, [['c1', { command: 'echo changed > a.txt; touch b.txt' }]]);
      const outcome = await setup.call('c1');
      expect(outcome).toMatchObject({
        ok: false,
        error: expect.stringMatching(/was not run: .*only a sandbox .*ACA_SANDBOX=none.*read_file/),
      });
      expect(outcome.command).toBeUndefined();
      expect(fs.readFileSync(path.join(setup.workTree, 'a.txt'), 'utf8')).toBe('a\n');
      expect(fs.existsSync(path.join(setup.workTree, 'b.txt'))).toBe(false);
    },
  );

  test("without a sandbox, a Coder's command runs and writes the work tree", async () => {
    const setup = await preparedRun({ sandboxMode: 'none' });
    await setup.askedFor('coder', [['c1', { command: 'echo made > made.txt' }]]);
    expect(await setup.call('c1')).toMatchObject({ ok: true, command: { exitCode: 0 } });
    expect(fs.readFileSync(path.join(setup.workTree, 'made.txt'), 'utf8')).toBe('made\n');
  });

  test("the turn's protected files stay as they were, even for a Coder", async () => {
    const setup = await preparedRun();
    fs.mkdirSync(path.join(setup.workTree, 'tests'));
    fs.writeFileSync(
      path.join(setup.workTree, 'tests/test_given.py'),
      'def test_given():\n    assert True\n',
    );
    await setup.askedFor(
      'coder',
      [
        [
          'c1',
          {
            command:
              'echo "def test_given(): pass" > tests/test_given.py; rm -f tests/test_given.py; mv tests t2; echo done',
          },
        ],
      ],
      ['tests/test_given.py'],
    );
    expect(await setup.call('c1')).toMatchObject({ ok: true, command: { exitCode: 0 } });
    expect(fs.readFileSync(path.join(setup.workTree, 'tests/test_given.py'), 'utf8')).toBe(
      'def test_given():\n    assert True\n',
    );
    expect(fs.existsSync(path.join(setup.workTree, 't2'))).toBe(false);
  });

  test(`a turn stores the whole output of its first ${WHOLE_OUTPUTS_PER_TURN} commands, then what each answer showed`, async () => {
    const setup = await preparedRun();
    const ids = Array.from({ length: WHOLE_OUTPUTS_PER_TURN + 2 }, (_, i) => `c${i}`);
    // 200 KB of control characters, each six characters once escaped in the stored JSON.
    await setup.askedFor(
      'coder',
      ids.map((id) => [id, { command: "head -c 200000 /dev/zero | tr '\\0' '\\1'" }]),
    );
    const stored: number[] = [];
    for (const id of ids) {
      await setup.call(id);
      const answer = (await setup.conversations.load(REF)).toolResults[id] as Record<string, unknown>;
      const output = await setup.reports.loadCommandOutput(String(answer.output_ref));
      expect(output).toMatchObject({ kind: 'command-output', exitCode: 0 });
      stored.push(output!.stdout.length);
      if (stored.length > WHOLE_OUTPUTS_PER_TURN) {
        expect(output).toMatchObject({ asAnswered: true, stdout: answer.stdout });
      }
    }
    expect(stored.slice(0, WHOLE_OUTPUTS_PER_TURN).every((chars) => chars === 200_000)).toBe(true);
    expect(stored.slice(WHOLE_OUTPUTS_PER_TURN).every((chars) => chars < 10_000)).toBe(true);
  });

  test("the worker's secrets are not in the answer nor in the stored output", async () => {
    const setup = await preparedRun();
    await setup.askedFor('tester', [
      ['c1', { command: 'env; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"' }],
    ]);
    await setup.call('c1');
    const answer = (await setup.conversations.load(REF)).toolResults.c1 as Record<string, unknown>;
    expect(answer).toMatchObject({ ok: true, exit_code: 0 });
    expect(JSON.stringify(answer)).not.toContain(SECRET);
    expect(JSON.stringify(await setup.reports.loadCommandOutput(String(answer.output_ref)))).not.toContain(
      SECRET,
    );
  });

  // The worker commits a Coder's command at once, with git, in the work tree the command just had:
  // whatever git-like thing it planted there must not run on the host, nor anything it left
  // running change the work tree after the commit.
  test('hooks, config, attributes and a git directory planted by a command never run when its work is committed', async () => {
    const setup = await preparedRun({ withStore: true });
    const ran = fs.mkdtempSync(path.join('/var/tmp', 'aca-command-hooks-'));
    fs.chmodSync(ran, 0o777);
    try {
      const script = (name: string) =>
        `printf '#!/bin/sh\\ntouch ${ran}/${name}\\ncat\\n' > ${name}; chmod 755 ${name}`;
      const hooks = [
        'pre-commit',
        'post-commit',
        'commit-msg',
        'pre-push',
        'reference-transaction',
        'post-index-change',
      ];
      const command = [
        'mkdir -p .git/hooks evil/hooks',
        ...hooks.map((hook) => `(cd .git/hooks && ${script(hook)}) && cp .git/hooks/${hook} evil/hooks/`),
        script('fsmonitor'),
        script('filter'),
        ...['.git/config', 'evil/config'].map(
          (config) =>
            `printf '[core]\\n\\thooksPath = ${setup.workTree}/.git/hooks\\n\\tfsmonitor = ${setup.workTree}/fsmonitor\\n[filter "evil"]\\n\\tclean = ${setup.workTree}/filter\\n\\tsmudge = ${setup.workTree}/filter\\n[diff "evil"]\\n\\ttextconv = ${setup.workTree}/filter\\n' > ${config}`,
        ),
        "printf '* filter=evil diff=evil\\n' > .gitattributes",
        'echo "gitdir: evil" > sub.git; echo code > code.py',
        `(sleep 2; echo late > late-${MARK}.txt) > /dev/null 2>&1 &`,
        'echo planted',
      ].join('\n');
      await setup.askedFor('coder', [['c1', { command }]]);
      const outcome = await setup.call('c1');
      expect(outcome).toMatchObject({ ok: true, command: { exitCode: 0, stdoutTail: 'planted' } });
      expect(outcome.commit).toMatch(/^[0-9a-f]{40}$/);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      // Planted as meant: the hooks are there, executable, and the config names them.
      expect(fs.statSync(path.join(setup.workTree, '.git/hooks/pre-commit')).mode & 0o111).toBe(0o111);
      expect(fs.readFileSync(path.join(setup.workTree, '.git/config'), 'utf8')).toContain('fsmonitor = ');
      expect(fs.readdirSync(ran)).toEqual([]);
      expect(fs.existsSync(path.join(setup.workTree, `late-${MARK}.txt`))).toBe(false);
      // The commit holds the command's files as written, no filter's output, and no git directory.
      const files = await git({ gitDir: setup.place.commonDir }, [
        'ls-tree',
        '-r',
        '--name-only',
        outcome.commit!,
      ]);
      expect(files.split('\n')).toEqual(expect.arrayContaining(['code.py', '.gitattributes', 'evil/config']));
      expect(files).not.toMatch(/^\.git\/|late-/m);
      const code = await git({ gitDir: setup.place.commonDir }, [
        'cat-file',
        'blob',
        `${outcome.commit}:code.py`,
      ]);
      expect(code).toBe('code\n');
    } finally {
      fs.rmSync(ran, { recursive: true, force: true });
    }
  });
});
