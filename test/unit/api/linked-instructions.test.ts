/**
 * `continue`, `retry` and `fork` keep the earlier run's `--instructions` unless given their own,
 * which is checked as `aca run` checks it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { linkedRunRequest, type EarlierRun, type LinkRequest } from '../../../src/api/linked-run';
import { scriptedRunInput } from '../../../src/llm/scenario';
import { loadConfig } from '../../../src/config';
import type { RunResult } from '../../../src/shared/run-types';
import { UserInputError } from '../../../src/shared/errors';
import { gitIn, makeRepo, removeFixtureRepos } from '../../helpers/repo-fixtures';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-linked-instructions-'));
afterAll(() => {
  removeFixtureRepos();
  fs.rmSync(home, { recursive: true, force: true });
});

function earlierRun(instructions?: string): EarlierRun {
  const repo = makeRepo({ 'a.py': 'x = 1\n' });
  const commit = gitIn(repo, 'rev-parse', 'HEAD').trim();
  const gitDir = path.join(repo, '.git');
  const place = {
    workflowId: 'earlier',
    branch: 'aca/earlier',
    disk: 'disk-1',
    gitDir,
    commonDir: gitDir,
    workTree: repo,
  };
  const result = {
    workflowId: 'earlier',
    state: 'FAILED',
    reason: 'max_iterations',
    iterations: 1,
    passRate: 0,
    tests: { passed: 0, failed: 1, errors: 0 },
    place,
    branch: 'aca/earlier',
    repo: null,
    baseCommit: commit,
    headCommit: commit,
    attempts: [{ iteration: 1, commit, passRate: 0 }],
    changedFiles: [],
    baseline: null,
    lastAnalysis: null,
  } as unknown as RunResult;
  const input = { ...scriptedRunInput({ name: 'x', agents: {} } as never), task: 'the earlier task' };
  return {
    input: instructions === undefined ? input : { ...input, instructions },
    result,
    plan: null,
    analyses: new Map(),
    baselineRef: null,
  };
}

const config = () => loadConfig({ ...process.env, ACA_HOME: home });
const kinds: LinkRequest[] = [
  { kind: 'continue', instruction: 'go on' },
  { kind: 'retry' },
  { kind: 'fork', at: 1 },
];

describe("a linked run's instructions", () => {
  test.each(kinds)("$kind keeps the earlier run's unless given its own", async (request) => {
    const kept = await linkedRunRequest(earlierRun('PARENT RULES'), request, config());
    expect(kept.input.instructions).toBe('PARENT RULES');
    const replaced = await linkedRunRequest(
      earlierRun('PARENT RULES'),
      { ...request, overrides: { instructions: 'NEW RULES' } },
      config(),
    );
    expect(replaced.input.instructions).toBe('NEW RULES');
    const none = await linkedRunRequest(earlierRun(), request, config());
    expect(none.input).not.toHaveProperty('instructions');
  });

  test('text given to a linked run is checked as for aca run', async () => {
    await expect(
      linkedRunRequest(earlierRun(), { kind: 'retry', overrides: { instructions: '\n' } }, config()),
    ).rejects.toThrow(new UserInputError('the --instructions text is empty'));
  });
});
