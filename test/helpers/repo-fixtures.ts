/**
 * Repositories as users have them, built by the tests themselves: git history, a `.gitignore`,
 * a virtual environment or a node_modules of the project's own, an untracked file of the user's.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const made: string[] = [];

export function removeFixtureRepos(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'User',
  GIT_AUTHOR_EMAIL: 'user@example.com',
  GIT_COMMITTER_NAME: 'User',
  GIT_COMMITTER_EMAIL: 'user@example.com',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: GIT_ENV });
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
}

/** A repository on branch main with `files` in its first commit. */
export function makeRepo(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-user-repo-'));
  made.push(dir);
  gitIn(dir, 'init', '--quiet', '--initial-branch=main');
  writeFiles(dir, files);
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '--quiet', '-m', 'the project as it is');
  return dir;
}

/**
 * Every file of the working tree (untracked and ignored ones too, but not the dependency
 * folders' contents) and the repository's HEAD, index and refs, hashed: equal digests mean the
 * user's repository is exactly as it was.
 */
export function repoDigest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (relative: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const name = relative ? `${relative}/${entry.name}` : entry.name;
      if (name === '.venv' || name === 'node_modules' || name === '.git/objects' || name === '.git/logs')
        continue;
      if (entry.isDirectory()) walk(name);
      else if (entry.isFile() || entry.isSymbolicLink()) {
        const data = entry.isSymbolicLink()
          ? fs.readlinkSync(path.join(dir, name))
          : fs.readFileSync(path.join(dir, name));
        out[name] = createHash('sha256').update(data).digest('hex');
      }
    }
  };
  walk('');
  // Worktrees and aca/* branches are the runs' own (the contract allows them); the rest must not move.
  for (const key of Object.keys(out)) {
    if (key.startsWith('.git/worktrees/') || key.startsWith('.git/refs/heads/aca/')) delete out[key];
  }
  return out;
}

/** A virtual environment (Debian's python, its pytest through system site-packages) with one module of its own. */
export function addVenv(repo: string, modules: Record<string, string>): void {
  const venv = path.join(repo, '.venv');
  execFileSync('/usr/bin/python3', ['-m', 'venv', '--without-pip', '--system-site-packages', venv]);
  const site = execFileSync(path.join(venv, 'bin', 'python'), [
    '-c',
    'import sysconfig; print(sysconfig.get_paths()["purelib"])',
  ])
    .toString()
    .trim();
  writeFiles(site, modules);
}

const ACA_NODE_MODULES = path.resolve(__dirname, '..', '..', 'node_modules');

/** The project's own node_modules: aca's, hard-linked (a link out of the repository would not resolve in the sandbox). */
export function addNodeModules(repo: string): void {
  execFileSync('cp', ['-al', fs.realpathSync(ACA_NODE_MODULES), path.join(repo, 'node_modules')]);
}
