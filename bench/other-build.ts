/**
 * Another commit's build beside this one, for side-by-side figures (`--against <commit>`): the
 * commit's files exported once into the cache (`git archive`, no worktree or branch left in the
 * repository), sharing this checkout's node_modules, and that build's own bench stack and demo-run
 * code loaded into this process, so its worker runs its own workflow and activities on the same
 * Temporal server as this build's.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { programLookup } from '../src/config';
import { UserInputError } from '../src/shared/errors';
import type { BenchStack, BenchStackOptions } from './bench-stack';
import type * as DemoRuns from './demo-runs';

/** The checkout this bench runs from. */
export const REPO_ROOT = path.resolve(__dirname, '..');

/** What the overhead part needs of a build: its stack and its way of running and reading a demo run. */
export interface BuildUnderTest {
  /** A short name for tables: the abbreviated commit, `+changes` when the work tree differs from it. */
  label: string;
  /** The full commit, or null outside a git checkout. */
  commit: string | null;
  stack: BenchStack;
  demo: Pick<typeof DemoRuns, 'measureDemoRun' | 'overheadOf' | 'warmUp'>;
  /** Whether the build's package-lock.json equals this checkout's (it runs on this checkout's node_modules). */
  sameDependencies: boolean;
}

function git(args: string[]): string {
  return execFileSync('git', ['-C', REPO_ROOT, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** This checkout's commit and whether its work tree has changes beside it. */
export function thisBuild(): { label: string; commit: string | null } {
  try {
    const commit = git(['rev-parse', 'HEAD']);
    const changed = git(['status', '--porcelain', '--untracked-files=no']) !== '';
    return { label: `${commit.slice(0, 7)}${changed ? '+changes' : ''} (this build)`, commit };
  } catch {
    return { label: 'this build', commit: null };
  }
}

/** The full commit `ref` names in this checkout's repository; a UserInputError when it names none. */
export function resolveCommit(ref: string): string {
  if (ref.startsWith('-')) throw new UserInputError(`--against ${ref}: not a commit`);
  try {
    return git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new UserInputError(`--against ${ref}: no such commit in ${REPO_ROOT}`);
  }
}

function buildsDir(): string {
  return path.join(programLookup().cacheHome, 'aca', 'bench-builds');
}

/**
 * The commit's files under the cache (exported once, then reused), with node_modules linked to
 * this checkout's. Returns the folder.
 */
export function checkOutBuild(commit: string, progress: (m: string) => void): string {
  const dir = path.join(buildsDir(), commit);
  const done = path.join(dir, '.aca-bench-build');
  if (fs.existsSync(done)) return dir;
  progress(`exporting ${commit.slice(0, 7)} to ${dir}`);
  fs.mkdirSync(buildsDir(), { recursive: true });
  const tmp = `${dir}.tmp-${randomBytes(4).toString('hex')}`;
  const tar = `${tmp}.tar`;
  try {
    fs.mkdirSync(tmp);
    git(['archive', '--format=tar', '-o', tar, commit]);
    execFileSync('tar', ['-xf', tar, '-C', tmp], { stdio: 'ignore' });
    fs.symlinkSync(fs.realpathSync(path.join(REPO_ROOT, 'node_modules')), path.join(tmp, 'node_modules'));
    fs.writeFileSync(path.join(tmp, '.aca-bench-build'), `${commit}\n`);
    // Another bench may have finished the same export meanwhile: its tree serves, ours goes.
    if (!fs.existsSync(done)) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    }
  } finally {
    fs.rmSync(tar, { force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

function readIfThere(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Opens the commit's own bench stack on `temporalAddress`, its worker bundling the commit's
 * workflow code, and loads its demo-run code. The commit must have bench/bench-stack.ts and
 * bench/demo-runs.ts with the functions this part calls.
 */
export async function openOtherBuild(
  commit: string,
  options: Pick<BenchStackOptions, 'progress' | 'keepHome'> & { temporalAddress: string },
): Promise<BuildUnderTest> {
  const dir = checkOutBuild(commit, options.progress);
  const label = commit.slice(0, 7);
  const files = {
    stack: path.join(dir, 'bench', 'bench-stack.ts'),
    demo: path.join(dir, 'bench', 'demo-runs.ts'),
    workflows: path.join(dir, 'src', 'workflows', 'index.ts'),
  };
  const missing = Object.values(files).filter((f) => !fs.existsSync(f));
  if (missing.length > 0) {
    throw new UserInputError(
      `--against ${label}: its tree has no ${missing.map((f) => path.relative(dir, f)).join(', ')}; compare with its own bench instead`,
    );
  }
  const stackModule = (await import(files.stack)) as Partial<typeof import('./bench-stack')>;
  const demo = (await import(files.demo)) as Partial<typeof DemoRuns>;
  const { openBenchStack } = stackModule;
  const { measureDemoRun, overheadOf, warmUp } = demo;
  if (!openBenchStack || !measureDemoRun || !overheadOf || !warmUp) {
    throw new UserInputError(
      `--against ${label}: its bench has no openBenchStack, measureDemoRun, overheadOf and warmUp to call`,
    );
  }
  const same =
    readIfThere(path.join(dir, 'package-lock.json')) ===
    readIfThere(path.join(REPO_ROOT, 'package-lock.json'));
  if (!same)
    options.progress(`${label}'s package-lock.json differs from this checkout's: it runs on this one's`);
  const stack = await openBenchStack({
    progress: (m) => options.progress(`${label}: ${m}`),
    keepHome: options.keepHome,
    temporalAddress: options.temporalAddress,
    // Its own workflow code, never a bundle of this build's that ACA_WORKFLOW_BUNDLE names.
    workflowsPath: files.workflows,
  });
  return { label, commit, stack, demo: { measureDemoRun, overheadOf, warmUp }, sameDependencies: same };
}
