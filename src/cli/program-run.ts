import { Command } from 'commander';
import { startRunWorkflow, type AcaClient } from '../api/aca-client';
import { claimRunId } from '../api/claim-run-id';
import type { LinkRequest } from '../api/linked-run';
import { MAX_INSTRUCTIONS_BYTES, type ValidRunRequest } from '../api/run-request';
import { recordStartedRun } from '../api/started-runs';
import type { AcaConfig } from '../config';
import { UserInputError } from '../shared/errors';
import { positiveInteger } from '../shared/option-numbers';
import { MAX_TASK_BYTES } from '../shared/task-size';
import { printableLine } from '../shared/terminal-text';
import { LANGUAGES } from '../shared/types';
import { EXIT } from './cli-context';
import { linkOverrides, type LinkFlags } from './link-flags';
import { ensureLocalRunStack } from './local-run-stack';
import { jsonOption, withClient, type ProgramContext } from './program-context';
import { attachToRun, parseRunRequest, type RunFlags } from './run-command';
import { readTask } from './task-input';

/** The commands that start a run: `run`, and `continue`, `retry` and `fork` from an earlier one. */
export function addRunCommands(program: Command, ctx: ProgramContext): void {
  const { io, config, set } = ctx;
  program
    .command('run')
    .description('start a run on a task and follow it to its end')
    .argument('[task]', 'what to do, as one quoted argument; - reads it from standard input')
    .option(
      '--task-file <file>',
      `read the task from a file (at most ${MAX_TASK_BYTES / 1024} KiB, as any task)`,
    )
    .option('--language <language>', `language of the code: ${LANGUAGES.join(', ')} (python)`)
    .option('--workspace <dir>', 'folder the run works in (default: a new one under ACA_WORKSPACES)')
    .option('--tests <dir>', 'acceptance tests, copied in read-only and counted in the pass rate')
    .option('--max-iterations <n>', 'attempts before the run fails (15)')
    .option('--warn-at <n>', 'attempt at which a warning is shown (12)')
    .option('--max-tokens <n>', 'token budget; a run over it ends FAILED budget')
    .option('--max-cost <usd>', "budget in dollars at the model's prices; a run over it ends FAILED budget")
    .option('--on-limit <fail|ask>', 'at the iteration limit: fail (default), or ask: wait for aca extend')
    .option('--ask-timeout <duration>', 'how long an --on-limit ask run waits for aca extend (default 24h)')
    .option('--model <name>', 'model name (ACA_MODEL)')
    .option('--model-timeout <seconds>', 'time one model call may take (120)')
    .option('--max-steps <n>', 'model calls one agent turn may make (12)')
    .option('--id <id>', 'workflow id of the run')
    .option('--replace', 'with --id of an ended run: discard that run and start anew under its id')
    .option('--repo <dir>', 'work on the git repository holding DIR, in a worktree on branch aca/<id>')
    .option('--no-repo', 'a fresh workspace even when started inside a git work tree')
    .option('--base <ref>', 'the commit a --repo run starts from (HEAD)')
    .option('--test-cmd <command>', "the project's test command (else .aca.json, else detected)")
    .option('--setup-cmd <command>', 'run once in the worktree before the baseline (else .aca.json)')
    .option('--setup-network', 'let the setup command reach the network (off by default)')
    .option('--memory <mib>', "a test run's memory limit in MiB (else .aca.json's, else 1024)")
    .option('--wall-time <seconds>', 'time one test run may take (else .aca.json’s, else 120)')
    .option(
      '--target <test-id>',
      'a test that must pass, whatever the baseline said: a pytest node id, <file>::<full name> for Jest, or a test file (repeatable)',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option('--no-failure-memory', 'recall no lessons from failure memory and store none of this run')
    .option(
      '--instructions <file>',
      `project instructions for every agent, after the repository's AGENTS.md (at most ${MAX_INSTRUCTIONS_BYTES / 1024} KiB)`,
    )
    .option('--detach', 'print the run id and return at once')
    .addOption(jsonOption())
    .action(async (task: string | undefined, flags: RunFlags) => {
      const cfg = config();
      // Validate everything before touching the network, so bad input starts nothing.
      const text = await readTask(task, flags.taskFile, { hint: (line) => io.err(line) });
      const request = await parseRunRequest(text, flags, cfg);
      for (const warning of request.warnings) io.err(printableLine(warning));
      set(await startAndFollow(cfg, { ...request, replace: flags.replace === true }, async () => request));
    });

  /**
   * Starts a checked request (`prepare` runs against the server, for linked runs that read the
   * earlier one) and follows it as `aca run` does, or prints its id with --detach.
   */
  const startAndFollow = async (
    cfg: AcaConfig,
    flags: { detach: boolean; json: boolean; replace: boolean },
    prepare: (aca: AcaClient) => Promise<ValidRunRequest>,
  ): Promise<number> => {
    const stack = flags.detach ? null : await ensureLocalRunStack(cfg, io);
    try {
      return await withClient(cfg, async (aca) => {
        const request = await prepare(aca);
        const replaced = await claimRunId(aca, request.workflowId, flags.replace);
        if (replaced) io.err(replaced);
        await startRunWorkflow(aca.temporal, request, cfg.taskQueue);
        recordStartedRun(cfg.home, {
          workflowId: request.workflowId,
          repo: request.input.repo?.path ?? null,
        });
        if (flags.detach) {
          io.out(request.workflowId);
          return EXIT.success;
        }
        if (!flags.json) {
          const about = [
            request.input.workspace && `workspace ${request.input.workspace}`,
            request.input.link && `from ${request.input.link.parentRun}`,
          ].filter(Boolean);
          io.err(
            printableLine(`Started ${request.workflowId}${about.length ? ` (${about.join(', ')})` : ''}`),
          );
          io.err(printableLine(`Web UI: ${aca.webUrl(request.workflowId)}`));
        }
        return attachToRun(aca, request.workflowId, io, { json: flags.json, interruptPauses: true });
      });
    } finally {
      await stack?.close();
    }
  };

  const linkedOptions = (command: Command) =>
    command
      .option('--id <id>', 'workflow id of the new run')
      .option('--replace', 'with --id of an ended run: discard that run and start anew under its id')
      .option('--model <name>', "model of the new run (default: the earlier run's)")
      .option('--max-cost <usd>', 'budget in dollars of the new run (default: the earlier run’s)')
      .option('--on-limit <fail|ask>', "at the iteration limit: fail or ask (default: the earlier run's)")
      .option('--instructions <file>', "project instructions for every agent (default: the earlier run's)")
      .option('--detach', 'print the new run id and return at once')
      .addOption(jsonOption());
  type LinkedFlags = LinkFlags & { id?: string; replace?: boolean; detach?: boolean; json?: boolean };
  const startLinked = (parentId: string, request: LinkRequest, flags: LinkedFlags) => {
    // Checked (and --instructions read) before a local stack or the server is touched.
    const overrides = linkOverrides(flags);
    return startAndFollow(
      config(),
      { detach: flags.detach === true, json: flags.json === true, replace: flags.replace === true },
      (aca) => aca.prepareLinked(parentId, { ...request, overrides }, flags.id),
    );
  };

  linkedOptions(
    program
      .command('continue')
      .description(
        "a new run from an ended run's final commit, plan and analyses, with a follow-up instruction",
      )
      .argument('<id>', 'the ended run')
      .argument('<instruction>', 'what to do next, as one quoted argument')
      .option(
        '--max-iterations <n>',
        "attempts of the new run (default: as many as the earlier run's limit)",
      ),
  ).action(async (id: string, instruction: string, flags: LinkedFlags) => {
    set(await startLinked(id, { kind: 'continue', instruction }, flags));
  });

  linkedOptions(
    program
      .command('retry')
      .description(
        'a new run that goes on from where a FAILED run stopped: its last commit, plan and analysis',
      )
      .argument('<id>', 'the FAILED run')
      .option('--max-iterations <n>', 'more attempts (default: as many as the run had)'),
  ).action(async (id: string, flags: LinkedFlags) => {
    set(await startLinked(id, { kind: 'retry' }, flags));
  });

  linkedOptions(
    program
      .command('fork')
      .description('a new run that starts at attempt K from the state the run had before it')
      .argument('<id>', 'the ended run')
      .option('--at <k>', 'the attempt to start at (1 = from the base)')
      .option(
        '--max-iterations <n>',
        'attempts of the new run, counted from K (default: up to the earlier limit)',
      )
      .option('--feedback <text>', 'guidance for its first Coder turn'),
  ).action(async (id: string, flags: LinkedFlags & { at?: string; feedback?: string }) => {
    const at = positiveInteger(flags.at, 'at');
    if (at === undefined) throw new UserInputError('--at K is needed: the attempt to start at');
    set(
      await startLinked(
        id,
        { kind: 'fork', at, ...(flags.feedback !== undefined ? { feedback: flags.feedback } : {}) },
        flags,
      ),
    );
  });
}
