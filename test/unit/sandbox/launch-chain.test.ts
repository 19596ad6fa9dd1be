/**
 * The host-side launch chain in front of bwrap (bwrap-launch.ts): one perl process that, as root,
 * enters a private mount namespace, makes the staging bind mounts, drops to the sandbox uid with
 * no groups, opens the seccomp filter on its fd and joins an empty session keyring. What each of
 * those steps must leave is checked from inside the sandbox; the host's mount table must not
 * change; a step that fails stops the launch with a line that says which.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HOST_TOOL_ENV } from '../../../src/shared/executables';
import {
  bwrapTools,
  bwrapCommand,
  DEFAULT_SANDBOX_LIMITS,
  isRoot,
  pickSandboxUid,
  type BwrapLaunchInput,
} from '../../../src/sandbox';
import { makeWorkspace, removeWorkspaces } from '../../helpers/workspace-fixture';

afterAll(() => removeWorkspaces());

function launch(overrides: Partial<BwrapLaunchInput>, script: string) {
  const tools = bwrapTools();
  if (!tools) throw new Error('bubblewrap is not available');
  const workspace = makeWorkspace({});
  fs.chmodSync(workspace, 0o755);
  const { command, args } = bwrapCommand({
    tools,
    workspace,
    needsNode: false,
    limits: DEFAULT_SANDBOX_LIMITS,
    env: { PATH: '/usr/bin:/bin' },
    argv: ['/bin/sh', '-c', script],
    ...(isRoot() ? { uid: pickSandboxUid() } : {}),
    ...overrides,
  });
  return { command, ...spawnSync(command, args, { env: HOST_TOOL_ENV, encoding: 'utf8', timeout: 30_000 }) };
}

describe('the launch chain', () => {
  test('one perl process stands in front of bwrap', () => {
    const tools = bwrapTools()!;
    const { command } = launch({}, 'true');
    expect(command).toBe(tools.perl);
  });

  test('inside: no groups, no capabilities, the filter on, an empty keyring of its own, no stray fd', () => {
    const r = launch(
      {},
      'grep -E "^(Groups|CapEff|CapPrm|NoNewPrivs|Seccomp):" /proc/self/status; ls /proc/self/fd; cat /proc/keys',
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Groups:\s*$/m);
    expect(r.stdout).toMatch(/^CapEff:\s*0+$/m);
    expect(r.stdout).toMatch(/^CapPrm:\s*0+$/m);
    expect(r.stdout).toMatch(/^NoNewPrivs:\s*1$/m);
    expect(r.stdout).toMatch(/^Seccomp:\s*2$/m);
    // The filter's fd is bwrap's to read, not the test's.
    const fds = r.stdout.split('\n').filter((l) => /^\d+$/.test(l));
    expect(fds).not.toContain('9');
    // keyctl is denied inside, so /proc/keys shows what the session keyring holds: only itself.
    const keys = r.stdout.split('\n').filter((l) => /keyring/.test(l));
    expect(keys.every((l) => /_ses: empty/.test(l))).toBe(true);
  });

  test('the staging mounts never reach the host mount table', () => {
    const before = fs.readFileSync('/proc/self/mountinfo', 'utf8');
    const r = launch({ outputDir: makeWorkspace({}) }, 'true');
    expect(r.status).toBe(0);
    expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).toBe(before);
  });

  (isRoot() ? test : test.skip)(
    'a staged folder that cannot be bound stops the launch, saying which (root only: staging is)',
    () => {
      const missing = path.join(makeWorkspace({}), 'gone');
      const r = launch({ workspace: missing }, 'echo started');
      expect(r.status).not.toBe(0);
      expect(r.stdout).not.toContain('started');
      expect(r.stderr).toContain(`aca: cannot bind ${missing}`);
    },
  );
});
