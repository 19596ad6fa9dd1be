import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { projectRoot } from '../../src/sandbox';
import type { DependencyFolder } from '../../src/shared/test-command';

/**
 * Stand-ins for a user's repository: the folder its ignored dependency folders live in, apart
 * from the workspace (a run's worktree) exactly as in a real `--repo` run.
 */
const created: string[] = [];

export function makeRepo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-repo-test-'));
  created.push(dir);
  return dir;
}

export function removeRepos(): void {
  for (const dir of created.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * `<repo>/.venv` made with Debian's interpreter (without pip, seeing the system's pytest), with
 * `modules` written into its site-packages.
 */
export function makeVenv(repo: string, modules: Record<string, string>): DependencyFolder {
  const venv = path.join(repo, '.venv');
  execFileSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', '--system-site-packages', venv]);
  const lib = path.join(venv, 'lib');
  const [pythonDir] = fs.readdirSync(lib).filter((name) => name.startsWith('python3'));
  for (const [name, text] of Object.entries(modules)) {
    fs.writeFileSync(path.join(lib, pythonDir, 'site-packages', name), text);
  }
  return { relative: '.venv', hostPath: venv };
}

/**
 * `<repo>/node_modules` holding aca's own packages (jest, typescript, vitest, mocha), hard-linked:
 * fast on one file system, and unlike links to aca's folder they resolve inside the sandbox. The
 * files are aca's own inodes, so tests must never write into existing ones.
 */
export function linkNodeModules(repo: string): DependencyFolder {
  const target = path.join(repo, 'node_modules');
  // Resolved first: in a git worktree sharing a checkout's packages, node_modules is a link to them.
  execFileSync('cp', ['-al', fs.realpathSync(path.join(projectRoot(), 'node_modules')), target]);
  return { relative: 'node_modules', hostPath: target };
}

/** Every file under `dir` with its size and modification time, to prove nothing changed. */
export function treeFingerprint(dir: string): string[] {
  const out: string[] = [];
  const walk = (p: string): void => {
    const st = fs.lstatSync(p);
    out.push(`${path.relative(dir, p)}:${st.size}:${st.mtimeMs}:${(st.mode & 0o7777).toString(8)}`);
    if (st.isDirectory()) for (const name of fs.readdirSync(p).sort()) walk(path.join(p, name));
  };
  walk(dir);
  return out;
}
