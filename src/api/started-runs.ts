import * as fs from 'node:fs';
import * as path from 'node:path';
import { enclosingWorkTree } from '../repo';
import { UserInputError } from '../shared/errors';

/**
 * The runs started with an `ACA_HOME`, one JSON line each (`started-runs.jsonl` there), so that
 * `aca status`, `watch`, `log`, `result` and `diff` without an id can take the latest one: the
 * latest started from the same repository (or, for a run without one, the same folder), else the
 * latest started with this home at all. Temporal knows every run of the namespace, not which
 * were started here, so the home keeps its own list.
 */
export const STARTED_RUNS_FILE = 'started-runs.jsonl';

/** Read from the end: the newest lines are the ones that matter, and the file only grows. */
const READ_AT_MOST = 256 * 1024;

export interface StartedRun {
  workflowId: string;
  at: string;
  /** The folder `aca run` (or the library) was started from. */
  cwd: string;
  /** The repository the run works on (its top level), or null for a run in a fresh workspace. */
  repo: string | null;
}

/** Adds a run to the home's list. A home that cannot be written loses only this convenience. */
export function recordStartedRun(
  home: string,
  run: { workflowId: string; repo: string | null },
  cwd: string = process.cwd(),
): void {
  const line: StartedRun = { workflowId: run.workflowId, at: new Date().toISOString(), cwd, repo: run.repo };
  try {
    fs.mkdirSync(home, { recursive: true });
    fs.appendFileSync(path.join(home, STARTED_RUNS_FILE), `${JSON.stringify(line)}\n`);
  } catch {
    // Nothing else depends on the list; an id can always be given.
  }
}

/** The runs of the home's list, oldest first (lines that do not parse are skipped). */
export function readStartedRuns(home: string): StartedRun[] {
  let text: string;
  try {
    const file = path.join(home, STARTED_RUNS_FILE);
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, 'r');
    try {
      const length = Math.min(size, READ_AT_MOST);
      const buffer = Buffer.alloc(length);
      fs.readSync(fd, buffer, 0, length, size - length);
      text = buffer.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return [];
  }
  const runs: StartedRun[] = [];
  for (const line of text.split('\n')) {
    try {
      const run = JSON.parse(line) as Partial<StartedRun>;
      if (typeof run.workflowId === 'string' && run.workflowId && typeof run.cwd === 'string') {
        runs.push({
          workflowId: run.workflowId,
          at: typeof run.at === 'string' ? run.at : '',
          cwd: run.cwd,
          repo: typeof run.repo === 'string' ? run.repo : null,
        });
      }
    } catch {
      // A line cut by the read window or by a crash mid-write.
    }
  }
  return runs;
}

/**
 * The run meant by a command given no id: the latest started from the repository that holds
 * `cwd` (or from `cwd` itself), else the latest started with this home. UserInputError when the
 * home has started none.
 */
export async function latestStartedRun(
  home: string,
  cwd: string = process.cwd(),
): Promise<{ workflowId: string; from: 'here' | 'home' }> {
  const runs = readStartedRuns(home);
  const latest = runs.at(-1);
  if (!latest) {
    throw new UserInputError(
      `no run was started with ACA_HOME ${home} yet; give a run id (aca list shows the runs)`,
    );
  }
  const here = resolved(cwd);
  const repo = await enclosingWorkTree(here);
  for (let i = runs.length - 1; i >= 0; i--) {
    const run = runs[i]!;
    if ((repo !== null && run.repo === repo) || resolved(run.cwd) === here) {
      return { workflowId: run.workflowId, from: 'here' };
    }
  }
  return { workflowId: latest.workflowId, from: 'home' };
}

function resolved(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}
