import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DependencyFolder } from '../../shared/test-command';
import type { TestEnv } from '../../shared/test-env';
import type { SandboxMode } from '../../shared/types';
import { bwrapTools, checkSandboxAvailable } from '../launch/availability';
import { runBare, runSandboxed, type LaunchInput } from '../launch/launch-run';
import { resolveLimits, type SandboxLimits } from '../launch/limits';
import type { RunOutcome } from '../run-spec';
import { restoreAcceptanceCopies, type AcceptanceFiles } from '../verdicts/acceptance';
import { copyForSandbox } from '../verdicts/originals';
import { checkDependencyFolders, prepareMountPoints } from '../workspace/dependency-folders';
import { HeadTailCapture } from './clip-output';
import { agentCommandRunner } from './command-runner';

/** What of each stream is kept whole for the store: its first and last this many bytes. */
export const STORED_HEAD_BYTES = 256 * 1024;
export const STORED_TAIL_BYTES = 256 * 1024;
/** What of each stream the answer shows: its first and last this many bytes. */
export const ANSWER_HEAD_BYTES = 2 * 1024;
export const ANSWER_TAIL_BYTES = 6 * 1024;
/** The longest command line taken (bash and the kernel take far longer ones; a model needs none). */
export const MAX_COMMAND_CHARS = 16_000;
/** Why a command asked to leave the work tree as it is cannot run here. */
export const READ_ONLY_NEEDS_SANDBOX =
  'a command that must leave the work tree as it is needs the sandbox, and this worker has none (ACA_SANDBOX=none): without it nothing keeps the command from writing';

export interface AgentCommandOptions {
  /** The work tree: the command's current folder, and the only host folder it may write. */
  workspace: string;
  /** Run by `bash -c`. */
  command: string;
  /** Wall time after which every process of the command is killed. */
  timeoutMs: number;
  /**
   * The work tree bound read-only (a Planner's or Reflector's command). Only a sandbox can hold a
   * command to it, so without one (`mode: 'none'`) such a command is refused, never run writable.
   */
  readOnly?: boolean;
  /** The user's acceptance files: mounted read-only over their copies, as for a test run. */
  acceptance?: AcceptanceFiles;
  /** The repository's dependency folders, mounted read-only at their place, as for a test run. */
  dependencies?: DependencyFolder[];
  /** The test runs' limits; the wall time is `timeoutMs`. */
  limits?: Partial<SandboxLimits>;
  /** The repository's own variables, as its test runs get them. */
  env?: TestEnv;
  mode: SandboxMode;
  heartbeat?: () => void;
  heartbeatEveryMs?: number;
  /** Aborting kills every process of the command; the call then rejects. */
  signal?: AbortSignal;
}

export interface AgentCommandResult {
  /** null when the command was killed (its time limit, a signal). */
  exitCode: number | null;
  exitSignal: string | null;
  /** Each clipped to its head and tail, with a line counting what was cut. */
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
  /** A limit the command hit besides its time: memory, files added to the work tree. */
  limitHit?: string;
  /** Acceptance copies the command changed (only possible without a sandbox), put back since. */
  restoredAcceptance?: string[];
  /** Without a sandbox: the warning that nothing contained the command. */
  sandboxWarning?: string;
  /** The whole output, up to STORED_HEAD_BYTES + STORED_TAIL_BYTES of each stream. */
  output: { stdout: string; stderr: string };
}

/**
 * Runs an agent's command line as a test run is run: through the same launch path (bubblewrap,
 * seccomp, a session keyring of its own, the run's cgroup and rlimits, the workspace lent to a
 * sandbox uid when the worker is root), never with the network, and with nothing of it left
 * running when the call returns. Throws only when the command could not be started at all.
 */
export async function runAgentCommand(options: AgentCommandOptions): Promise<AgentCommandResult> {
  const command = checkCommand(options.command);
  const workspace = realFolder(options.workspace);
  if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) {
    throw new Error(
      `runAgentCommand: the time limit must be a positive number of ms, got ${options.timeoutMs}`,
    );
  }
  const limits = resolveLimits({ ...options.limits, wallTimeoutMs: options.timeoutMs });
  const dependencies = checkDependencyFolders(options.dependencies ?? []);
  if (options.readOnly && options.mode !== 'bwrap') throw new Error(READ_ONLY_NEEDS_SANDBOX);
  const availability = checkSandboxAvailable(options.mode);
  if (!availability.ok) throw new Error(availability.message);
  if (options.signal?.aborted) throw abortError();

  const stdout = new HeadTailCapture(STORED_HEAD_BYTES, STORED_TAIL_BYTES);
  const stderr = new HeadTailCapture(STORED_HEAD_BYTES, STORED_TAIL_BYTES);
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-command-'));
  fs.chmodSync(runDir, 0o755);
  const acceptance = options.acceptance;
  try {
    const common: LaunchInput = {
      // Never the network, whatever the run's setup was allowed.
      opts: {
        network: false,
        ...(options.env ? { env: options.env } : {}),
        ...(acceptance ? { acceptance } : {}),
        ...(options.heartbeat ? { heartbeat: options.heartbeat } : {}),
        ...(options.heartbeatEveryMs ? { heartbeatEveryMs: options.heartbeatEveryMs } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      },
      workspace,
      limits,
      dependencies,
      runner: agentCommandRunner(command),
      outputDir: runDir,
      withoutOutputFolder: true,
      testPaths: [],
      acceptanceTests: [],
      onOutput: (chunk, fd) => (fd === 2 ? stderr : stdout).push(chunk),
      ...(options.readOnly ? { readOnly: true } : {}),
    };
    // As before a test run: a folder above an acceptance file is bound onto itself by its path, and
    // what a step without those mounts left (a setup command run again on an adopting host) may
    // have made it a link, which only bubblewrap's resolving it in two roots keeps from binding a
    // host folder in its place. Nothing of the run is alive now, so nothing races the repair.
    if (acceptance) restoreAcceptanceCopies(workspace, acceptance);
    let outcome: RunOutcome;
    if (options.mode === 'bwrap') {
      const tools = bwrapTools();
      if (!tools) throw new Error('bubblewrap is unavailable');
      prepareMountPoints(workspace, dependencies);
      const covered = acceptance ? copyForSandbox(acceptance, path.join(runDir, 'acceptance')) : undefined;
      outcome = await runSandboxed({ ...common, tools, ...(covered ? { covered } : {}) });
    } else {
      outcome = await runBare(common);
    }
    // Only a command without a sandbox can have changed a copy; put back, it changes no verdict.
    const restored = acceptance ? restoreAcceptanceCopies(workspace, acceptance) : [];
    if (outcome.result.aborted) throw abortError();
    const limitHit = [outcome.limitHit, growthOverLimit(outcome, limits)].filter(Boolean).join('; ');
    return {
      exitCode: outcome.result.exitCode,
      exitSignal: outcome.result.exitSignal,
      stdout: stdout.clipped(ANSWER_HEAD_BYTES, ANSWER_TAIL_BYTES),
      stderr: stderr.clipped(ANSWER_HEAD_BYTES, ANSWER_TAIL_BYTES),
      durationMs: outcome.result.durationMs,
      timedOut: outcome.result.timedOut,
      ...(limitHit ? { limitHit } : {}),
      ...(restored.length ? { restoredAcceptance: restored } : {}),
      ...(availability.warning ? { sandboxWarning: availability.warning } : {}),
      output: { stdout: stdout.clipped(), stderr: stderr.clipped() },
    };
  } finally {
    fs.rmSync(runDir, { recursive: true, force: true });
  }
}

/** The command line, or a clear error for one that cannot be run. */
function checkCommand(command: string): string {
  if (typeof command !== 'string' || command.trim() === '')
    throw new Error('runAgentCommand: the command line is empty');
  if (command.length > MAX_COMMAND_CHARS)
    throw new Error(`runAgentCommand: the command line is longer than ${MAX_COMMAND_CHARS} characters`);
  // An argument of a process cannot hold NUL; the kernel would cut the command there.
  if (command.includes('\0')) throw new Error('runAgentCommand: the command line holds a NUL character');
  return command;
}

function realFolder(workspace: string): string {
  let real: string;
  try {
    real = fs.realpathSync(workspace);
  } catch {
    throw new Error(`runAgentCommand: workspace ${workspace} does not exist`);
  }
  if (!fs.statSync(real).isDirectory())
    throw new Error(`runAgentCommand: workspace ${workspace} is not a folder`);
  if (real === '/') throw new Error('runAgentCommand: the file system root cannot be a workspace');
  return real;
}

/** What the command added to the work tree beyond a test run's allowance, said in words. */
function growthOverLimit(outcome: RunOutcome, limits: SandboxLimits): string {
  const files = outcome.usageAfter.files - outcome.usageBefore.files;
  const bytes = outcome.usageAfter.bytes - outcome.usageBefore.bytes;
  if (files <= limits.maxNewFiles && bytes <= limits.maxNewBytes) return '';
  return `the command added ${files} files (${bytes} bytes) to the work tree, more than a test run may (${limits.maxNewFiles} files, ${limits.maxNewBytes} bytes)`;
}

function abortError(): Error {
  return Object.assign(new Error('the command was cancelled'), { name: 'AbortError' });
}
