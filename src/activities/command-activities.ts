import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Context, log } from '@temporalio/activity';
import type { ToolCallOutcome } from '../agents/agent-turn';
import { AGENT_SPECS } from '../agents/agent-specs';
import { takeUpConversation } from '../agents/conversation-fork';
import type { HostRuns } from '../repo';
import { checkSandboxAvailable, runAgentCommand, type AgentCommandResult } from '../sandbox';
import { DEFAULT_LIMIT_MAXIMUMS, type LimitMaximums } from '../shared/limit-maximums';
import type { RunTestSetup } from '../shared/run-types';
import type { AgentRole, SandboxMode } from '../shared/types';
import type { Conversation, ConversationStore } from '../store/conversation-store';
import { commandOutputRef, type ReportStore } from '../store/report-store';
import { parseArguments, type ToolResult } from '../tools/tool';
import { DEFAULT_COMMAND_TIMEOUT_SECONDS, runCommandTool } from '../tools/run-command';
import type { ToolCallInput } from './agent-activities';
import { sandboxHeartbeat, withHeartbeats } from './heartbeats';
import { asCommitFailure, atRecordedCommit, commitStep } from './host-steps';
import { sandboxLimitsOf } from './test-activities';

export interface CommandActivityDeps {
  store: ConversationStore;
  reports: ReportStore;
  /** The runs whose files are on this host. */
  host?: HostRuns;
  sandboxMode: SandboxMode;
  /** The most any run's limits may be here (ACA_MAX_*): the command's time limit included. */
  limitMaximums?: LimitMaximums;
  /** ACA_RUN_COMMAND: false, and this worker runs no agent's command; absent: it does. */
  runCommand?: boolean;
}

/** A run_command call, with what the run's test runs get besides (see RunTestsInput). */
export interface RunCommandInput extends ToolCallInput {
  /** The project's dependency folders, limits and variables; aca's defaults when absent. */
  setup?: RunTestSetup | null;
  /** The folder given with `--tests`: the originals of the protected files. */
  testsDir?: string | null;
  /** The user's acceptance files, read-only to the command. */
  protectedPaths?: string[];
  /** On a host that adopted the run: the commit that added the `--tests` files. */
  acceptanceCommit?: string | null;
}

/**
 * What workflow history keeps of a command that ran, for `aca log` (cli/run-log.ts): its line,
 * status and the last lines of each stream; the whole output is in the report store.
 */
export interface CommandSummary {
  line: string;
  exitCode: number | null;
  durationMs: number;
  timedOut: boolean;
  stdoutTail: string;
  stderrTail: string;
  outputRef?: string;
}

/** A run_command call's outcome: the workflow's, and what `aca log` shows of it. */
export type CommandCallOutcome = ToolCallOutcome & { command?: CommandSummary };

const SUMMARY_LINE_CHARS = 300;
const SUMMARY_TAIL_LINES = 5;
const SUMMARY_TAIL_CHARS = 400;

/**
 * Commands of one turn whose output is stored whole (up to the sandbox's stored caps, a few MiB
 * each once escaped as JSON); each later one stores what its answer showed. A turn may run
 * hundreds of commands, and each can print its caps' worth in a moment.
 */
export const WHOLE_OUTPUTS_PER_TURN = 16;

const HEARTBEAT_EVERY_MS = 5_000;
/** Whether a role's commands may change the work tree; the others only look. */
const commandsWrite = (role: AgentRole): boolean => AGENT_SPECS[role].commandsWrite;

export function createCommandActivities(deps: CommandActivityDeps) {
  const maximums = deps.limitMaximums ?? DEFAULT_LIMIT_MAXIMUMS;
  return {
    /**
     * One run_command call, on the host's test queue. A call already answered answers the same
     * again without running (a retry never runs a command twice once it has an answer); bad
     * arguments and a command that cannot start are answers too (`ok: false`). With a git store
     * a Coder's or Tester's changes are committed at once, as the file tools' are.
     */
    async runCommand(input: RunCommandInput): Promise<CommandCallOutcome> {
      const host = deps.host;
      if (!host) throw new Error('run_command runs on a worker with hosts (see createAcaActivities)');
      return atRecordedCommit(host, input, async (place) => {
        if (input.openedAs) {
          const openedAs = input.openedAs;
          await withHeartbeats(HEARTBEAT_EVERY_MS, () =>
            takeUpConversation(deps.store, input.ref, openedAs, { call: input.toolCallId }),
          );
        }
        const conversation = await withHeartbeats(HEARTBEAT_EVERY_MS, () => deps.store.load(input.ref));
        const taken = input.openedAs ? { ref: input.ref } : {};
        const call = conversation.entries
          .flatMap((entry) => (entry.kind === 'assistant' ? entry.toolCalls : []))
          .find((c) => c.id === input.toolCallId);
        if (!call) throw new Error(`tool call ${input.toolCallId} is not part of ${input.ref}`);
        if (call.name !== runCommandTool.name)
          throw new Error(`tool call ${input.toolCallId} is ${call.name}, not ${runCommandTool.name}`);
        const line = commandLineOf(call.arguments);
        const done = conversation.toolResults[input.toolCallId];
        if (done) return { ...outcomeOf(done, line, conversation.toolCommits?.[input.toolCallId]), ...taken };

        const answer = await answerCall(place.workTree, conversation, call.arguments, input);
        let commit: string | null = null;
        if (answer.ok && commandsWrite(conversation.role) && host.usesStore) {
          // Pushed at once: another host that adopts the run mid-turn finds what the command wrote.
          const turn = input.ref.slice(input.ref.lastIndexOf('/') + 1);
          commit = await withHeartbeats(HEARTBEAT_EVERY_MS, () =>
            commitStep(host, input, {
              message: `aca: ${turn}: run_command`,
              step: `${input.ref}/${input.toolCallId}`,
              execution: input.execution ?? '',
            }),
          );
        }
        conversation.toolResults[input.toolCallId] = answer;
        if (commit) conversation.toolCommits = { ...conversation.toolCommits, [input.toolCallId]: commit };
        await withHeartbeats(HEARTBEAT_EVERY_MS, () => deps.store.save(conversation));
        return { ...outcomeOf(answer, line, commit ?? undefined), ...taken };
      }).catch((err: unknown) => {
        throw asCommitFailure(err);
      });
    },
  };

  /** The call's answer: what the command did, or why it could not run. */
  async function answerCall(
    workTree: string,
    conversation: Conversation,
    rawArguments: string,
    input: RunCommandInput,
  ): Promise<ToolResult> {
    const parsed = parseArguments(runCommandTool, rawArguments);
    if (!parsed.ok) return { ok: false, error: parsed.error };
    // The turn's tools were fixed when it opened; the operator's switch counts from now on, here.
    if (deps.runCommand === false || conversation.offered?.runCommand !== true) {
      return {
        ok: false,
        error: `not executed: run_command is not ${deps.runCommand === false ? 'run on this worker (ACA_RUN_COMMAND=off)' : 'among the tools of this turn'}`,
      };
    }
    const available = checkSandboxAvailable(deps.sandboxMode);
    if (!available.ok) return { ok: false, error: `the command could not run: ${available.message}` };
    // Such a turn is not offered the tool on a worker without a sandbox; one opened elsewhere, or
    // a model that calls it anyway, is refused here rather than run with the work tree writable.
    if (!commandsWrite(conversation.role) && deps.sandboxMode !== 'bwrap') {
      return { ok: false, error: readOnlyRefusal(conversation.role) };
    }
    const requested = parsed.args.timeout_seconds ?? DEFAULT_COMMAND_TIMEOUT_SECONDS;
    const timeoutSeconds = Math.min(requested, maximums.wallSeconds);
    const originals = await acceptanceOriginals(workTree, conversation, input);
    let result: AgentCommandResult;
    try {
      result = await runAgentCommand({
        workspace: workTree,
        command: parsed.args.command,
        timeoutMs: timeoutSeconds * 1000,
        readOnly: !commandsWrite(conversation.role),
        mode: deps.sandboxMode,
        ...(originals.acceptance ? { acceptance: originals.acceptance } : {}),
        ...(input.setup
          ? {
              dependencies: input.setup.dependencies,
              limits: sandboxLimitsOf(input.setup.limits, maximums),
              ...(input.setup.env ? { env: input.setup.env } : {}),
            }
          : { limits: sandboxLimitsOf(undefined, maximums) }),
        ...sandboxHeartbeat(),
        signal: Context.current().cancellationSignal,
      });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      return { ok: false, error: `the command could not run: ${(err as Error).message}` };
    } finally {
      originals.dispose();
    }
    if (result.sandboxWarning) log.warn(result.sandboxWarning);
    const outputRef = commandOutputRef(input.ref, input.toolCallId);
    const storedBefore = Object.values(conversation.toolResults).filter(
      (answer) => answer.ok && typeof answer.output_ref === 'string',
    ).length;
    const whole = storedBefore < WHOLE_OUTPUTS_PER_TURN;
    await withHeartbeats(HEARTBEAT_EVERY_MS, () =>
      deps.reports.saveCommandOutput(outputRef, {
        kind: 'command-output',
        command: parsed.args.command,
        exitCode: result.exitCode,
        exitSignal: result.exitSignal,
        durationMs: result.durationMs,
        timedOut: result.timedOut,
        ...(whole ? result.output : { stdout: result.stdout, stderr: result.stderr, asAnswered: true }),
      }),
    );
    return {
      ok: true,
      exit_code: result.exitCode,
      ...(result.exitSignal ? { signal: result.exitSignal } : {}),
      stdout: result.stdout,
      stderr: result.stderr,
      duration_ms: result.durationMs,
      timed_out: result.timedOut,
      ...(result.timedOut ? { timeout_seconds: timeoutSeconds } : {}),
      ...(result.limitHit ? { limit_hit: result.limitHit } : {}),
      output_ref: outputRef,
    };
  }

  /**
   * The acceptance files' originals for the command's sandbox, as a test run finds them: the
   * `--tests` folder (or, on a host that adopted the run, the commit that added it). A call
   * without them keeps the turn's protected files as the work tree holds them now, copied aside
   * first, which the file tools have kept from being changed.
   */
  async function acceptanceOriginals(
    workTree: string,
    conversation: Conversation,
    input: RunCommandInput,
  ): Promise<{ acceptance?: { sourceDir: string; files: string[] }; dispose: () => void }> {
    const files = input.protectedPaths?.length ? input.protectedPaths : conversation.protectedPaths;
    if (files.length === 0) return { dispose: () => undefined };
    if (input.testsDir && input.protectedPaths?.length) {
      const sourceDir = input.acceptanceCommit
        ? await deps.host!.acceptanceOriginals(input.place, input.acceptanceCommit, input.protectedPaths)
        : input.testsDir;
      return { acceptance: { sourceDir, files: input.protectedPaths }, dispose: () => undefined };
    }
    const present = files.filter((file) => isFileIn(workTree, file));
    if (present.length === 0) return { dispose: () => undefined };
    const snapshot = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-command-originals-'));
    for (const file of present) {
      fs.mkdirSync(path.dirname(path.join(snapshot, file)), { recursive: true });
      fs.copyFileSync(path.join(workTree, file), path.join(snapshot, file));
    }
    return {
      acceptance: { sourceDir: snapshot, files: present },
      dispose: () => fs.rmSync(snapshot, { recursive: true, force: true }),
    };
  }
}

function readOnlyRefusal(role: AgentRole): string {
  const name = role.charAt(0).toUpperCase() + role.slice(1);
  return `the command was not run: the ${name}'s commands must leave the work tree as it is, and only a sandbox can hold them to that; this worker has none (ACA_SANDBOX=none). Read the files with read_file and search_files instead.`;
}

/** Whether `relative` is a plain file inside `root`, reached without following a link. */
function isFileIn(root: string, relative: string): boolean {
  const parts = relative.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..')) return false;
  let at = root;
  for (const [i, part] of parts.entries()) {
    at = path.join(at, part);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(at);
    } catch {
      return false;
    }
    if (i < parts.length - 1 ? !stat.isDirectory() : !stat.isFile()) return false;
  }
  return true;
}

function outcomeOf(answer: ToolResult, commandLine: string, commit: string | undefined): CommandCallOutcome {
  const outcome: CommandCallOutcome = answer.ok ? { ok: true } : { ok: false, error: answer.error };
  if (commit) outcome.commit = commit;
  if (answer.ok) outcome.command = commandSummary(answer, commandLine);
  return outcome;
}

/** The end of a clipped stream, for workflow history: its last lines, at most SUMMARY_TAIL_CHARS. */
function tailOf(text: unknown): string {
  if (typeof text !== 'string') return '';
  const lines = text.trimEnd().split('\n').slice(-SUMMARY_TAIL_LINES).join('\n');
  return lines.length > SUMMARY_TAIL_CHARS ? `…${lines.slice(-(SUMMARY_TAIL_CHARS - 1))}` : lines;
}

function commandSummary(answer: Record<string, unknown>, commandLine: string): CommandSummary {
  return {
    line:
      commandLine.length > SUMMARY_LINE_CHARS
        ? `${commandLine.slice(0, SUMMARY_LINE_CHARS - 1)}…`
        : commandLine,
    exitCode: typeof answer.exit_code === 'number' ? answer.exit_code : null,
    durationMs: Number(answer.duration_ms) || 0,
    timedOut: answer.timed_out === true,
    stdoutTail: tailOf(answer.stdout),
    stderrTail: tailOf(answer.stderr),
    ...(typeof answer.output_ref === 'string' ? { outputRef: answer.output_ref } : {}),
  };
}

/** The command line as the model wrote it, or what could be made of arguments that do not parse. */
function commandLineOf(rawArguments: string): string {
  const parsed = parseArguments(runCommandTool, rawArguments);
  return parsed.ok ? parsed.args.command : rawArguments;
}
