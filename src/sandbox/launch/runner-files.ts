import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_DEPENDENCY_FOLDERS } from '../workspace/dependency-folders';
import { shippedFile } from '../shipped-files';
import { toolchainNodeModules } from '../workspace/project-root';
import { compileDenyFilter, seccompArchOf } from './seccomp-filter';

/** Where things live on the host; created once per worker process and removed when it exits. */
export interface RunnerFiles {
  /** Holds transform.js and a node_modules link to the project's, so the transformer resolves typescript beside itself. */
  dir: string;
  transform: string;
  nodeModules: string;
  /** aca's pytest plugin (module `aca_results`) and Jest reporter: verdicts/python/aca_results.py, verdicts/js/results-reporter.cjs. */
  pytestPlugin: string;
  jestReporter: string;
  /** The Jest acceptance verdict's test runner, environment, guard, test framework and its guard of the acceptance tests' modules: verdicts/js/verdict-*.cjs. */
  jestVerdictRunner: string;
  jestVerdictEnvironment: string;
  jestVerdictGuard: string;
  jestVerdictTestFramework: string;
  jestVerdictAcceptanceModules: string;
  /**
   * pytest's configuration, given with `-c` so that no pytest.ini, pyproject.toml, tox.ini or
   * setup.cfg in the workspace can add options such as `-k` or `--deselect` to the run.
   */
  pytestIni: string;
  /** The seccomp filter bwrap installs (seccomp-filter.ts), or null on an architecture it has no numbers for. */
  seccompFilter: string | null;
  /** Minimal /etc for the sandbox: a user without a home, files-only name lookups, localhost. */
  etc: { passwd: string; group: string; hosts: string; nsswitch: string };
  /** Empty mount points used when root stages host paths for the unprivileged sandbox user. */
  mountPoints: {
    workspace: string;
    nodeModules: string;
    node: string;
    acceptance: string;
    output: string;
    /** One per dependency folder a run may mount (dep0, dep1…). */
    dependencies: string[];
  };
}

export const SANDBOX_INNER_UID = 1000;

let cached: RunnerFiles | undefined;

export function runnerFiles(): RunnerFiles {
  if (cached && fs.existsSync(cached.transform)) return cached;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-sandbox-'));
  // The unprivileged sandbox user must be able to reach these files.
  fs.chmodSync(dir, 0o755);
  const write = (name: string, text: string): string => {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
    fs.writeFileSync(file, text, { mode: 0o644 });
    return file;
  };
  const nodeModules = toolchainNodeModules();
  fs.symlinkSync(nodeModules, path.join(dir, 'node_modules'));
  const u = SANDBOX_INNER_UID;
  const arch = seccompArchOf();
  let seccompFilter: string | null = null;
  if (arch) {
    seccompFilter = path.join(dir, 'seccomp.bpf');
    fs.writeFileSync(seccompFilter, compileDenyFilter(arch), { mode: 0o644 });
  }
  const files: RunnerFiles = {
    seccompFilter,
    dir,
    transform: write('transform.js', shippedFile('jestTransformer')),
    nodeModules,
    pytestPlugin: write('aca_results.py', shippedFile('pytestResultsPlugin')),
    jestReporter: write('aca-results-reporter.js', shippedFile('jestResultsReporter')),
    jestVerdictRunner: write('aca-verdict-runner.js', shippedFile('jestVerdictRunner')),
    jestVerdictEnvironment: write('aca-verdict-environment.js', shippedFile('jestVerdictEnvironment')),
    jestVerdictGuard: write('aca-verdict-guard.js', shippedFile('jestVerdictGuard')),
    jestVerdictTestFramework: write('aca-verdict-test-framework.js', shippedFile('jestVerdictTestFramework')),
    jestVerdictAcceptanceModules: write(
      'aca-verdict-acceptance-modules.js',
      shippedFile('jestVerdictAcceptanceModules'),
    ),
    pytestIni: write('pytest.ini', '[pytest]\n'),
    etc: {
      passwd: write(
        'etc/passwd',
        `sandbox:x:${u}:${u}:sandbox:/tmp:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
      ),
      group: write('etc/group', `sandbox:x:${u}:\nnogroup:x:65534:\n`),
      hosts: write('etc/hosts', '127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost\n'),
      // Files only: no DNS or systemd modules to try (and time out on) inside a netless sandbox.
      nsswitch: write('etc/nsswitch.conf', 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n'),
    },
    mountPoints: {
      workspace: path.join(dir, 'mnt', 'workspace'),
      nodeModules: path.join(dir, 'mnt', 'node_modules'),
      node: path.join(dir, 'mnt', 'node'),
      acceptance: path.join(dir, 'mnt', 'acceptance'),
      output: path.join(dir, 'mnt', 'output'),
      dependencies: Array.from({ length: MAX_DEPENDENCY_FOLDERS }, (_, i) =>
        path.join(dir, 'mnt', `dep${i}`),
      ),
    },
  };
  fs.mkdirSync(files.mountPoints.workspace, { recursive: true, mode: 0o755 });
  fs.mkdirSync(files.mountPoints.acceptance, { recursive: true, mode: 0o755 });
  fs.mkdirSync(files.mountPoints.output, { recursive: true, mode: 0o755 });
  fs.mkdirSync(files.mountPoints.nodeModules, { recursive: true, mode: 0o755 });
  for (const dep of files.mountPoints.dependencies) fs.mkdirSync(dep, { recursive: true, mode: 0o755 });
  fs.writeFileSync(files.mountPoints.node, '', { mode: 0o755 });
  fs.chmodSync(path.join(dir, 'mnt'), 0o755);
  fs.chmodSync(path.join(dir, 'etc'), 0o755);
  cached = files;
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return files;
}
