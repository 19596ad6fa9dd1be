/**
 * With a git store, a run's last step may run on another host, where the end-of-run give-back
 * cannot reach the workspace on the disk that prepared the run. So on that disk no sandbox uid
 * may keep any of the workspace once a sandboxed step ends. Root only: only a root worker lends
 * workspaces to sandbox uids.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createRepoActivities, type PreparedRun } from '../../src/activities/repo-activities';
import { createTestActivities, type TestRunSummary } from '../../src/activities/test-activities';
import { FileReportStore } from '../../src/agents/report-store';
import { parseGitStoreLocation } from '../../src/repo/git-store-location';
import { RunPlaces } from '../../src/repo/run-places';
import { isSandboxUid } from '../../src/sandbox/sandbox-user';
import { isRoot } from '../../src/sandbox/tools';
import type { RunPlace } from '../../src/shared/run-types';
import { tempDirs } from '../helpers/temp-dirs';

// Without root there is no lending to give back: the sandbox runs as the worker's own user.
const rootOnly = isRoot() ? test : test.skip;
const tempDir = tempDirs('aca-give-back-');
const AUTHOR = { name: 'aca', email: 'aca@localhost' };

/** Entries of the tree (the folder itself included) owned by a sandbox uid. */
function lentEntries(root: string): string[] {
  const lent: string[] = [];
  const walk = (dir: string): void => {
    for (const name of fs.readdirSync(dir)) {
      const full = path.join(dir, name);
      const st = fs.lstatSync(full);
      if (isSandboxUid(st.uid) || isSandboxUid(st.gid)) lent.push(path.relative(root, full));
      if (st.isDirectory()) walk(full);
    }
  };
  if (isSandboxUid(fs.lstatSync(root).uid)) lent.push('.');
  walk(root);
  return lent;
}

describe("the preparing disk's workspace with a git store", () => {
  rootOnly(
    'no file stays lent to the sandbox once a test run ends there; a copy elsewhere stays lent',
    async () => {
      const store = path.join(tempDir(), 'store.git');
      execFileSync('git', ['init', '--quiet', '--bare', store]);
      const location = parseGitStoreLocation(store, '/nonexistent');
      const homeA = tempDir();
      const homeB = tempDir();
      const placesA = new RunPlaces({ store: location, home: homeA, author: AUTHOR });
      const placesB = new RunPlaces({ store: location, home: homeB, author: AUTHOR });
      const env = new MockActivityEnvironment();
      const repoA = createRepoActivities({
        gitAuthor: AUTHOR,
        sandboxMode: 'bwrap',
        gitStore: location,
        places: placesA,
      });
      const prepared = (await env.run(repoA.prepareRun, {
        workflowId: 'give-back-1',
        workspace: path.join(homeA, 'workspaces', 'give-back-1'),
        language: 'python' as const,
        repo: null,
        gitDir: path.join(homeA, 'git', 'give-back-1.git'),
        testCommand: null,
        setupCommand: null,
      })) as PreparedRun;
      const workspace = prepared.git.workTree;
      fs.writeFileSync(path.join(workspace, 'calc.py'), 'def add(a, b):\n    return a + b\n');
      fs.writeFileSync(
        path.join(workspace, 'test_calc.py'),
        'import pathlib\nfrom calc import add\n\n\ndef test_add():\n    pathlib.Path("made-by-test").mkdir()\n    pathlib.Path("made-by-test/out.txt").write_text("x")\n    assert add(1, 2) == 3\n',
      );
      const commit = (await env.run(repoA.commitWork, {
        message: 'aca: code',
        place: {
          workflowId: 'give-back-1',
          branch: prepared.branch,
          commit: prepared.startCommit,
          git: prepared.git,
          disk: prepared.disk!,
        },
        step: 'code',
      })) as string | null;
      const place: RunPlace = {
        workflowId: 'give-back-1',
        branch: prepared.branch,
        commit: commit!,
        git: prepared.git,
        disk: prepared.disk!,
      };
      const run = async (places: RunPlaces, home: string): Promise<TestRunSummary> => {
        const tests = createTestActivities({
          reports: new FileReportStore(path.join(home, 'runs')),
          sandboxMode: 'bwrap',
          maxConcurrentTestRuns: 1,
          places,
        });
        return (await env.run(tests.runTests, {
          runKey: 'give-back-1/run',
          attempt: 1,
          workspace,
          language: 'python' as const,
          place,
        })) as TestRunSummary;
      };
      const onA = await run(placesA, homeA);
      expect(onA).toMatchObject({ passed: 1, failed: 0, success: true });
      // The test made files as the sandbox uid; they are the workspace owner's again.
      expect(fs.existsSync(path.join(workspace, 'made-by-test', 'out.txt'))).toBe(true);
      expect(lentEntries(workspace)).toEqual([]);
      // On another host the run's copy is its worker's own and stays lent between test runs.
      const onB = await run(placesB, homeB);
      expect(onB).toMatchObject({ passed: 1, success: true });
      const copy = placesB.localPaths(place).workspace;
      expect(copy).not.toBe(workspace);
      expect(lentEntries(copy).length).toBeGreaterThan(0);
    },
    120_000,
  );
});
