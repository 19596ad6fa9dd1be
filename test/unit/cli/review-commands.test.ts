/**
 * AcaRun.diff/apply/discard and the `aca diff|apply|discard` commands on real git, with a
 * stand-in for Temporal that answers for one run: its status, its static summary (the task's
 * first line) and its result. The exit codes follow from the error classes (see main.ts).
 */
import type { Client } from '@temporalio/client';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AcaClient, RUN_WORKFLOW_TYPE } from '../../../src/api/aca-client';
import { applyCommand, diffCommand, discardCommand } from '../../../src/cli/review-commands';
import type { CliIO } from '../../../src/cli/cli-context';
import { resultCommand, statusCommand } from '../../../src/cli/inspect-commands';
import { loadConfig } from '../../../src/config';
import {
  ApplyConflictError,
  ApplyNeedsConsentError,
  git,
  pushRunCommit,
  changedFilesBetween,
  commitAll,
} from '../../../src/repo';
import { RunStateError, UnappliedChangesError, UserInputError } from '../../../src/shared/errors';
import type { RunSnapshot } from '../../../src/shared/run-types';
import {
  commitAsUser,
  fingerprint,
  makeRun,
  makeUserRepo,
  userGit,
  writeFiles,
  type MadeRun,
} from '../../helpers/run-fixture';

interface FakeRun {
  status: string;
  summary: string | undefined;
  snapshot: RunSnapshot;
}

/** Just enough of Temporal's client for AcaRun: describe, result and (for a running run) query. */
function fakeTemporal(runs: Map<string, FakeRun>): Client {
  const getHandle = (id: string) => {
    const run = runs.get(id)!;
    return {
      describe: async () => ({
        type: RUN_WORKFLOW_TYPE,
        status: { name: run.status },
        staticSummary: async () => run.summary,
      }),
      result: async () => run.snapshot,
      query: async () => ({ ...run.snapshot, paused: false }),
    };
  };
  return { workflow: { getHandle, list: async function* () {} } } as unknown as Client;
}

function snapshotOf(id: string, repo: string | null, made: MadeRun): RunSnapshot {
  return {
    workflowId: id,
    repo,
    branch: made.worktree.branch,
    baseCommit: made.base,
    headCommit: made.head,
    place: made.place,
    workspace: made.place.workTree,
    changedFiles:
      made.base === made.head ? [] : [{ path: 'calc.py', status: 'modified', added: 1, removed: 1 }],
  } as Partial<RunSnapshot> as RunSnapshot;
}

function captureIO(): CliIO & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), isTTY: false };
}

describe('reviewing a run through AcaRun and the command line', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-review-cli-'));
  const runs = new Map<string, FakeRun>();
  const aca = new AcaClient(fakeTemporal(runs), loadConfig({ ACA_HOME: root }));
  let counter = 0;
  let repo: string;
  let id: string;
  let made: MadeRun;

  beforeEach(async () => {
    counter += 1;
    id = `run-${counter}`;
    repo = makeUserRepo(path.join(root, `repo-${counter}`), {
      'calc.py': 'def add(a, b):\n    return a - b\n',
    });
    made = await makeRun(repo, path.join(root, `ws-${counter}`), `aca/${id}`, {
      'calc.py': 'def add(a, b):\n    return a + b\n',
    });
    runs.set(id, {
      status: 'COMPLETED',
      summary: 'Fix add in calc.py',
      snapshot: snapshotOf(id, repo, made),
    });
  });

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('aca diff prints the diff, --stat one line per file', async () => {
    const io = captureIO();
    expect(await diffCommand(aca, id, {}, io)).toBe(0);
    expect(io.lines.join('\n')).toContain('+    return a + b');
    const stat = captureIO();
    expect(await diffCommand(aca, id, { stat: true }, stat)).toBe(0);
    expect(stat.lines[0]).toMatch(/^ calc\.py\s+\| 2 \+-\n 1 file changed/);
  });

  test('aca apply commits with the task line as the message, then reports what was done', async () => {
    const io = captureIO();
    expect(await applyCommand(aca, id, io)).toBe(0);
    expect(io.lines).toEqual([
      expect.stringMatching(new RegExp(`^Applied run ${id} to main as [0-9a-f]{12} \\(1 file\\)\\.$`)),
    ]);
    expect(userGit(repo, 'log', '-1', '--format=%B')).toBe(
      `Fix add in calc.py\n\nApplied from aca run ${id} (branch aca/${id}).\n\n`,
    );
    const again = captureIO();
    expect(await applyCommand(aca, id, again)).toBe(0);
    expect(again.lines).toEqual([`The changes of run ${id} are already on main; nothing applied.`]);
  });

  test('without a static summary (an old or continued run) the message names the run', async () => {
    runs.get(id)!.summary = undefined;
    expect((await aca.run(id).apply()).applied).toBe(true);
    expect(userGit(repo, 'log', '-1', '--format=%s')).toBe(`aca run ${id}\n`);
  });

  test('apply refuses a running run and a run without --repo (exit 2 errors)', async () => {
    runs.get(id)!.status = 'RUNNING';
    const running = aca.run(id).apply();
    await expect(running).rejects.toThrow(RunStateError);
    await expect(running).rejects.toThrow(/is still running/);
    await expect(aca.run(id).discard()).rejects.toThrow(RunStateError);
    expect(fs.existsSync(made.place.workTree)).toBe(true);

    runs.set(id, { ...runs.get(id)!, status: 'COMPLETED', snapshot: snapshotOf(id, null, made) });
    await expect(aca.run(id).apply()).rejects.toThrow(/not started with --repo/);
    await expect(aca.run(id).apply()).rejects.toBeInstanceOf(UserInputError);
  });

  test('a conflict is an ApplyConflictError (exit 1), not bad input', async () => {
    commitAsUser(repo, { 'calc.py': 'def add(a, b):\n    return b + a\n' });
    const error = await aca
      .run(id)
      .apply()
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ApplyConflictError);
    expect(error).not.toBeInstanceOf(UserInputError);
    expect((error as ApplyConflictError).files).toEqual(['calc.py']);
  });

  test('the names a refusal lists are shown as git quotes them: a name cannot forge a line or act on the terminal', async () => {
    const hostile = 'calc\u202e\x1b[2K\nSUCCESS.py';
    commitAsUser(repo, { [hostile]: 'base\n' });
    const worktree = made.worktree;
    writeFiles(made.place.workTree, { [hostile]: 'the run\n' });
    made = { ...made, head: (await commitAll(worktree, 'aca: attempt 2, coder: more'))! };
    runs.get(id)!.snapshot = snapshotOf(id, repo, made);
    commitAsUser(repo, { [hostile]: 'the user\n' });
    writeFiles(repo, { [hostile]: 'not committed\n' });
    const shown = '"calc\\u202e\\x1b[2K\\nSUCCESS.py"';
    const dirty = await aca
      .run(id)
      .apply()
      .catch((err: unknown) => err);
    expect(dirty).toBeInstanceOf(UserInputError);
    expect((dirty as Error).message).toContain(`(${shown})`);
    expect((dirty as Error).message).not.toMatch(/[\n\x1b\u202e]/);
    userGit(repo, 'checkout', '--', '.');
    const conflict = await aca
      .run(id)
      .apply()
      .catch((err: unknown) => err);
    expect(conflict).toBeInstanceOf(ApplyConflictError);
    expect((conflict as Error).message).toContain(`conflict with main in ${shown}`);
    expect((conflict as Error).message).not.toMatch(/[\n\x1b\u202e]/);
  });

  test('aca discard of changes never applied: refused without a terminal or --force, nothing removed', async () => {
    const refused = await discardCommand(aca, id, {}, captureIO()).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UnappliedChangesError);
    expect(refused).toBeInstanceOf(UserInputError);
    expect((refused as Error).message).toBe(
      `run ${id} changed 1 file that was never applied (aca apply ${id} brings them in); aca discard ${id} --force throws them away`,
    );
    expect(fs.existsSync(made.place.workTree)).toBe(true);
    expect(userGit(repo, 'branch', '--format=%(refname:short)')).toContain(`aca/${id}`);
    expect(aca.run(id).discardedAt()).toBeNull();
  });

  test('aca discard at a terminal asks; "no" keeps everything, "yes" discards', async () => {
    const questions: string[] = [];
    const no = { ...captureIO(), confirm: async (q: string) => (questions.push(q), false) };
    expect(await discardCommand(aca, id, {}, no)).toBe(2);
    expect(questions).toEqual([`Run ${id}'s 1 changed file was never applied. Discard it?`]);
    expect(no.errors).toEqual(['Nothing discarded.']);
    expect(fs.existsSync(made.place.workTree)).toBe(true);
    const yes = { ...captureIO(), confirm: async () => true };
    expect(await discardCommand(aca, id, {}, yes)).toBe(0);
    expect(fs.existsSync(made.place.workTree)).toBe(false);
  });

  test('an applied run is discarded without --force; afterwards status and diff say it was discarded', async () => {
    expect((await aca.run(id).apply()).applied).toBe(true);
    expect(await discardCommand(aca, id, {}, captureIO())).toBe(0);
    expect(aca.run(id).discardedAt()).toMatch(/^\d{4}-\d\d-\d\dT/);
    await expect(diffCommand(aca, id, {}, captureIO())).rejects.toThrow(`run ${id} was discarded`);
    const status = captureIO();
    expect(await statusCommand(aca, id, {}, status)).toBe(0);
    expect(status.lines.at(-1)).toMatch(/^  discarded: \d{4}-.* \(aca discard\); its changes are gone$/);
  });

  test('aca discard --force removes the worktree and branch', async () => {
    const io = captureIO();
    expect(await discardCommand(aca, id, { force: true }, io)).toBe(0);
    expect(io.lines).toEqual([
      `Discarded run ${id}: removed workspace ${made.place.workTree}, branch aca/${id}.`,
    ]);
    expect(fs.existsSync(made.place.workTree)).toBe(false);
    expect(userGit(repo, 'branch', '--format=%(refname:short)')).toBe('main\n');
    const again = captureIO();
    expect(await discardCommand(aca, id, {}, again)).toBe(0);
    expect(again.lines).toEqual([`Run ${id} was discarded already.`]);
  });

  describe('what review cannot show', () => {
    /** The run's next commit adds a link out of the repository, a new binary and a conftest.py. */
    async function addRisks(): Promise<void> {
      const { workTree } = made.place;
      fs.symlinkSync('/etc/passwd', path.join(workTree, 'settings.py'));
      fs.writeFileSync(path.join(workTree, 'helper.so'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1]));
      writeFiles(workTree, { 'conftest.py': 'import os\n', inside: 'x\n' });
      fs.symlinkSync('inside', path.join(workTree, 'near'));
      const head = await commitAll(made.worktree, 'aca: attempt 2, coder: more');
      made = { ...made, head: head! };
      runs.get(id)!.snapshot = snapshotOf(id, repo, made);
    }

    test('aca apply refuses a link out of the repository and a new binary, naming each, changing nothing', async () => {
      await addRisks();
      const before = fingerprint(repo);
      const io = captureIO();
      const refusal = await applyCommand(aca, id, io).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(ApplyNeedsConsentError);
      expect(refusal).toBeInstanceOf(UserInputError); // exit 2
      const message = (refusal as Error).message;
      expect(message).toContain('settings.py -> /etc/passwd');
      expect(message).toContain('helper.so');
      expect(message).toContain('--allow-links');
      expect(message).toContain('--allow-binary');
      expect(message).not.toContain('near');
      expect((refusal as ApplyNeedsConsentError).files).toEqual(['helper.so', 'settings.py']);
      expect(fingerprint(repo)).toEqual(before);

      // One flag is not enough for both.
      await expect(aca.run(id).apply({ allowLinks: true })).rejects.toThrow(/helper\.so/);
      await expect(aca.run(id).apply({ allowBinary: true })).rejects.toThrow(/settings\.py -> \/etc\/passwd/);
      expect(fingerprint(repo)).toEqual(before);
    });

    test('with --allow-binary and --allow-links they are applied and listed under "Review with care"', async () => {
      await addRisks();
      const io = captureIO();
      expect(await applyCommand(aca, id, io, { allowBinary: true, allowLinks: true })).toBe(0);
      expect(io.lines).toEqual([
        expect.stringMatching(/^Applied run .* \(6 files\)\.$/),
        'Review with care:',
        '  conftest.py (test-config, added): test runner configuration: decides what the tests run',
        '  helper.so (binary, added): a new binary file: the diff cannot show it',
        '  near -> inside (link, added): a link within the repository',
        '  settings.py -> /etc/passwd (link, added): a link pointing outside the repository',
      ]);
      expect(fs.readlinkSync(path.join(repo, 'settings.py'))).toBe('/etc/passwd');
      expect(fs.existsSync(path.join(repo, 'helper.so'))).toBe(true);
    });

    test('hostile names and link targets under the heading come out visible, one line each', async () => {
      const { workTree } = made.place;
      fs.symlinkSync('/tmp/\x1b]52;c;eA==\x07\nSUCCESS', path.join(workTree, 'evil\x1b[2K'));
      writeFiles(workTree, { 'dir\u202e\x1b[1A/conftest.py': 'import os\n' });
      made = { ...made, head: (await commitAll(made.worktree, 'aca: attempt 2, coder: more'))! };
      runs.get(id)!.snapshot = snapshotOf(id, repo, made);
      const stat = captureIO();
      expect(await diffCommand(aca, id, { stat: true }, stat)).toBe(0);
      const heading = stat.lines.slice(stat.lines.indexOf('Review with care:') + 1);
      expect(heading).toEqual([
        '  "dir\\u202e\\x1b[1A/conftest.py" (test-config, added): test runner configuration: decides what the tests run',
        '  "evil\\x1b[2K" -> "/tmp/\\x1b]52;c;eA==\\x07\\nSUCCESS" (link, added): a link pointing outside the repository [aca apply needs --allow-links]',
      ]);
      const refusal = await applyCommand(aca, id, captureIO()).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(ApplyNeedsConsentError);
      // The refusal names them the same way: one line, nothing a terminal acts on.
      const message = (refusal as Error).message;
      expect(message).toContain('"evil\\x1b[2K" -> "/tmp/\\x1b]52;c;eA==\\x07\\nSUCCESS"');
      expect(message).not.toMatch(/[\n\x1b\x07]/);
    });

    test('a submodule commit (a gitlink) in the run: the diff shows it, --stat and apply name it', async () => {
      // aca's own commits leave nested repositories out; a gitlink can still reach a run's commit
      // through git itself, as this one does.
      const { workTree } = made.place;
      const pinned = made.base;
      const target = { gitDir: made.place.gitDir, workTree };
      await git(target, ['update-index', '--add', '--cacheinfo', `160000,${pinned},vendor/lib`]);
      const tree = (await git(target, ['write-tree'])).trim();
      const head = (await git(target, ['commit-tree', tree, '-p', made.head, '-m', 'vendor'])).trim();
      await git(target, ['update-ref', 'HEAD', head]);
      made = { ...made, head };
      runs.get(id)!.snapshot = snapshotOf(id, repo, made);

      expect(await changedFilesBetween(made.place, made.base, made.head)).toEqual([
        { path: 'calc.py', status: 'modified', added: 1, removed: 1 },
        { path: 'vendor/lib', status: 'added', added: 1, removed: 0 },
      ]);
      const diff = captureIO();
      expect(await diffCommand(aca, id, {}, diff)).toBe(0);
      expect(diff.lines.join('\n')).toContain(
        `+++ b/vendor/lib\n@@ -0,0 +1 @@\n+Subproject commit ${pinned}`,
      );
      const stat = captureIO();
      expect(await diffCommand(aca, id, { stat: true }, stat)).toBe(0);
      expect(stat.lines.join('\n')).toMatch(/ vendor\/lib\s+\| 1 \+/);
      expect(stat.lines.slice(stat.lines.indexOf('Review with care:') + 1)).toEqual([
        '  vendor/lib (submodule, added): a submodule commit: apply records it, fetches nothing',
      ]);
      const applied = captureIO();
      expect(await applyCommand(aca, id, applied)).toBe(0);
      expect(applied.lines).toContain(
        '  vendor/lib (submodule, added): a submodule commit: apply records it, fetches nothing',
      );
      expect(userGit(repo, 'ls-tree', 'HEAD', 'vendor/lib')).toBe(`160000 commit ${pinned}\tvendor/lib\n`);
      // Nothing fetched, nothing checked out in its place.
      expect(fs.readdirSync(path.join(repo, 'vendor', 'lib'))).toEqual([]);
    });

    test('a line of 10 MB: aca diff shows its start and says so, --raw shows it whole, --stat and apply name its file', async () => {
      const long = `x = "${'A'.repeat(10 * 1024 * 1024)}"`;
      // Escapes grow as they are shown: 1,200 bytes that are not UTF-8 show as 4,800 characters.
      const hidden = Buffer.from(`y = "${'\x9b'.repeat(1200)}"\n`, 'latin1');
      writeFiles(made.place.workTree, {
        'big.py': `${long}\nprint("after")\n`,
        'near.py': `${'b'.repeat(3998)}\n`,
      });
      fs.writeFileSync(path.join(made.place.workTree, 'bytes.txt'), hidden);
      made = { ...made, head: (await commitAll(made.worktree, 'aca: attempt 2, coder: long'))! };
      runs.get(id)!.snapshot = snapshotOf(id, repo, made);

      const diff = captureIO();
      expect(await diffCommand(aca, id, {}, diff)).toBe(0);
      const lines = diff.lines.join('\n').split('\n');
      expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(4100);
      const cut = lines.filter((l) => l.includes(' more characters not shown]'));
      expect(cut).toEqual([
        `+x = "${'A'.repeat(3994)} [... ${long.length + 1 - 4000} more characters not shown]`,
        // Cut in the middle of an escape: 6 + 4 * 1200 + 1 characters, 4000 shown.
        `+y = "${'\\x9b'.repeat(998)}\\x [... 807 more characters not shown]`,
      ]);
      expect(lines).toContain('+print("after")');
      expect(lines).toContain(`+${'b'.repeat(3998)}`);
      expect(diff.errors).toContain(
        '2 lines are over 4000 characters and shown cut; aca diff --raw prints them whole',
      );
      const bytes: Buffer[] = [];
      const raw = { ...captureIO(), outBytes: (b: Uint8Array) => bytes.push(Buffer.from(b)) };
      expect(await diffCommand(aca, id, { raw: true }, raw)).toBe(0);
      expect(Buffer.concat(bytes).includes(Buffer.from(`+${long}\n`))).toBe(true);

      const note = 'a line over 4000 characters: aca diff shows its start only (--raw shows it all)';
      const stat = captureIO();
      expect(await diffCommand(aca, id, { stat: true }, stat)).toBe(0);
      expect(stat.lines.slice(stat.lines.indexOf('Review with care:') + 1)).toEqual([
        `  big.py (long-line, added): ${note}`,
        `  bytes.txt (long-line, added): ${note}`,
      ]);
      const applied = captureIO();
      expect(await applyCommand(aca, id, applied)).toBe(0);
      expect(applied.lines).toContain(`  big.py (long-line, added): ${note}`);
    });

    test('aca diff --stat and aca result list them too; result --json carries them as reviewWithCare', async () => {
      await addRisks();
      const stat = captureIO();
      expect(await diffCommand(aca, id, { stat: true }, stat)).toBe(0);
      const heading = stat.lines.indexOf('Review with care:');
      expect(heading).toBeGreaterThan(0);
      expect(stat.lines.slice(heading + 1)).toEqual([
        '  conftest.py (test-config, added): test runner configuration: decides what the tests run',
        '  helper.so (binary, added): a new binary file: the diff cannot show it [aca apply needs --allow-binary]',
        '  near -> inside (link, added): a link within the repository',
        '  settings.py -> /etc/passwd (link, added): a link pointing outside the repository [aca apply needs --allow-links]',
      ]);
      // A plain diff stays a patch for `git apply`.
      const plain = captureIO();
      await diffCommand(aca, id, {}, plain);
      expect(plain.lines.join('\n')).not.toContain('Review with care');

      const snapshot = runs.get(id)!.snapshot;
      runs.get(id)!.snapshot = {
        ...snapshot,
        state: 'SUCCESS',
        reason: null,
        iterations: 1,
        maxIterations: 3,
        passRate: 1,
        tests: { passed: 1, failed: 0, errors: 0 },
        tokens: { prompt: 1, completion: 1 },
        cost: null,
        baseline: null,
        regressions: [],
        changedFiles: [],
        files: [],
        error: null,
      } as RunSnapshot;
      const text = captureIO();
      expect(await resultCommand(aca, id, { wait: true }, text)).toBe(0);
      expect(text.lines.slice(text.lines.indexOf('Review with care:'))).toHaveLength(5);
      const json = captureIO();
      expect(await resultCommand(aca, id, { json: true, wait: true }, json)).toBe(0);
      const parsed = JSON.parse(json.lines[0]!) as { reviewWithCare: unknown[]; workflowId: string };
      expect(parsed.workflowId).toBe(id);
      expect(parsed.reviewWithCare).toEqual([
        expect.objectContaining({ path: 'conftest.py', kind: 'test-config', needs: null }),
        expect.objectContaining({
          path: 'helper.so',
          kind: 'binary',
          change: 'added',
          needs: 'allow-binary',
        }),
        expect.objectContaining({ path: 'near', kind: 'link', target: 'inside', outside: false }),
        expect.objectContaining({
          path: 'settings.py',
          target: '/etc/passwd',
          outside: true,
          needs: 'allow-links',
        }),
      ]);
    });
  });

  test("aca discard also removes the run's branch from the git store", async () => {
    const store = loadConfig({ ACA_HOME: root }).gitStore;
    await pushRunCommit(store, made.place, `aca/${id}`, made.head, null);
    const io = captureIO();
    expect(await discardCommand(aca, id, { force: true }, io)).toBe(0);
    expect(io.lines).toEqual([
      `Discarded run ${id}: removed workspace ${made.place.workTree}, branch aca/${id}, its branch in the git store ${store.display}.`,
    ]);
    expect(userGit(repo, 'ls-remote', store.url)).not.toContain(`aca/${id}`);
    const again = captureIO();
    expect(await discardCommand(aca, id, {}, again)).toBe(0);
    expect(again.lines).toEqual([`Run ${id} was discarded already.`]);
  });
});
