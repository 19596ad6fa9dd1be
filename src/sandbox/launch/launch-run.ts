import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { HOST_TOOL_ENV } from '../../shared/executables';
import type { DependencyFolder } from '../../shared/test-command';
import type { RunTestsOptions } from '../run-options';
import { withRepositoryEnv } from './repository-env';
import { contextFor, type RunOutcome, type RunSpec } from '../run-spec';
import {
  endLease,
  lendWorkspace,
  workspaceUsage,
  type Lease,
  type Usage,
} from '../workspace/workspace-ownership';
import { prepareScratchFolders } from '../workspace/dependency-folders';
import type { bwrapTools } from './availability';
import { bareRunnerPaths } from './bare-launch';
import { bwrapCommand, SANDBOX_PATHS } from './bwrap-launch';
import { acquireCgroupLauncher } from './cgroup-launchers';
import { hostDependencies, mountedDependencies } from './dependency-env';
import type { SandboxLimits } from './limits';
import { runProcessTree, type ProcessRunOptions, type ProcessRunResult } from './process-tree';
import { withRlimits } from './rlimits';
import { killUidProcesses } from './sandbox-user';
import { isRoot } from './tools';

/** What of a run's options starting one of its processes reads. */
export type LaunchOptions = Pick<
  RunTestsOptions,
  'network' | 'heartbeat' | 'heartbeatEveryMs' | 'signal' | 'env' | 'acceptance'
>;

/** What starts one process of a run: the run's options, the real workspace and its limits. */
export interface LaunchInput extends RunSpec {
  opts: LaunchOptions;
  workspace: string;
  limits: SandboxLimits;
  dependencies: DependencyFolder[];
  /** The workspace bound read-only (sandbox only: without one nothing stops a write). */
  readOnly?: boolean;
  /** No output folder mounted: the process writes no report (an agent's command). */
  withoutOutputFolder?: boolean;
  /** Each chunk of output with its stream, besides the combined tail. */
  onOutput?: ProcessRunOptions['onOutput'];
}

/** One process in bubblewrap, as the workspace's lent sandbox uid when root, in a cgroup of its own. */
export async function runSandboxed(
  input: LaunchInput & { tools: NonNullable<ReturnType<typeof bwrapTools>> },
): Promise<RunOutcome> {
  const { opts, workspace, limits, dependencies, tools, covered, runner, outputDir } = input;
  let lease: Lease | undefined;
  let launcher: ReturnType<typeof acquireCgroupLauncher> = null;
  let usageBefore: Usage;
  let result: ProcessRunResult;
  let usageAfter: Usage | undefined;
  let oomKills = 0;
  try {
    if (isRoot()) {
      lease = await lendWorkspace(workspace);
      if (!input.withoutOutputFolder) fs.chownSync(outputDir, lease.uid, lease.uid);
      launcher = acquireCgroupLauncher(limits.runMemoryBytes, limits.maxProcesses);
    }
    const uid = lease?.uid;
    usageBefore = lease?.before ?? (await workspaceUsage(workspace));
    // Inside the sandbox the acceptance files at their workspace paths are the originals, mounted.
    const ctx = contextFor(
      input,
      SANDBOX_PATHS,
      limits,
      mountedDependencies(dependencies, SANDBOX_PATHS.workspace),
      uid,
      SANDBOX_PATHS.workspace,
    );
    const { argv, env: runnerEnv } = runner.command(ctx);
    const env = withRepositoryEnv(runnerEnv, opts.env, ctx.paths.workspace);
    const { command, args } = bwrapCommand({
      tools,
      workspace,
      ...(input.withoutOutputFolder ? {} : { outputDir }),
      ...(input.readOnly ? { readOnly: true } : {}),
      ...(covered ? { acceptance: covered } : {}),
      dependencies,
      scratch: prepareScratchFolders(dependencies, runner.scratchDirs ?? []),
      needsNode: runner.needsNode,
      network: opts.network === true,
      limits,
      env,
      argv: withRlimits(argv, limits, {
        limitProcesses: true,
        addressSpaceHeadroomBytes: runner.addressSpaceHeadroomBytes,
        memoryInCgroup: launcher !== null,
      }),
      ...(uid === undefined ? {} : { uid }),
    });
    result = await runProcessTree({
      command,
      args,
      env: HOST_TOOL_ENV,
      cwd: workspace,
      wallTimeoutMs: limits.wallTimeoutMs,
      outputBytes: limits.outputBytes,
      ...pick(opts, 'heartbeat', 'heartbeatEveryMs', 'signal'),
      ...pick(input, 'onOutput'),
      ...(launcher ? { spawn: launcher.spawn } : {}),
    });
    oomKills = launcher?.oomKills() ?? 0;
  } finally {
    // Only end the lease once nothing of the sandbox uid runs, so nothing can race the walk.
    if (lease) {
      await killUidProcesses(lease.uid);
      launcher?.release();
      usageAfter = await endLease(workspace, lease);
    }
  }
  return {
    result,
    seenWorkspace: SANDBOX_PATHS.workspace,
    usageBefore,
    usageAfter: usageAfter ?? (await workspaceUsage(workspace)),
    ...(oomKills > 0
      ? {
          limitHit: `the run's memory limit of ${Math.round(limits.runMemoryBytes / 1024 / 1024)} MiB was hit: the kernel killed ${oomKills} of its processes (--memory, or limits.memoryMiB in .aca.json)`,
        }
      : {}),
  };
}

/** One process without a sandbox, tagged so that a sweep finds what it left running. */
export async function runBare(input: LaunchInput): Promise<RunOutcome> {
  const { opts, workspace, limits, dependencies, runner, outputDir } = input;
  const usageBefore = await workspaceUsage(workspace);
  const { paths, cleanup } = bareRunnerPaths(workspace, outputDir);
  try {
    const runId = randomBytes(8).toString('hex');
    // Without a sandbox nothing covers the copies: the verdict process reads the originals.
    const originals = input.originals ?? opts.acceptance?.sourceDir ?? workspace;
    const ctx = contextFor(input, paths, limits, hostDependencies(dependencies), undefined, originals);
    const { argv, env: runnerEnv } = runner.command(ctx);
    const env = withRepositoryEnv(runnerEnv, opts.env, ctx.paths.workspace);
    const sweepTag = `ACA_SANDBOX_RUN=${runId}`;
    const wrapped = withRlimits(argv, limits, {
      limitProcesses: false,
      addressSpaceHeadroomBytes: runner.addressSpaceHeadroomBytes,
    });
    const result = await runProcessTree({
      command: wrapped[0],
      args: wrapped.slice(1),
      env: { ...env, ACA_SANDBOX_RUN: runId },
      cwd: workspace,
      wallTimeoutMs: limits.wallTimeoutMs,
      outputBytes: limits.outputBytes,
      sweepTag,
      ...pick(opts, 'heartbeat', 'heartbeatEveryMs', 'signal'),
      ...pick(input, 'onOutput'),
    });
    return { result, seenWorkspace: workspace, usageBefore, usageAfter: await workspaceUsage(workspace) };
  } finally {
    cleanup();
  }
}

function pick<T extends object, K extends keyof T>(obj: T, ...keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (obj[key] !== undefined) out[key] = obj[key];
  return out;
}
