import { Command, Option } from 'commander';
import { AcaClient } from '../api/aca-client';
import { loadConfig, type AcaConfig } from '../config';
import { UserInputError } from '../shared/errors';
import { printableLine } from '../shared/terminal-text';
import { LANGUAGES, LISTED_STATES, type ListedState } from '../shared/types';
import { EXIT, type CliIO } from './cli-context';
import {
  cancelCommand,
  extendCommand,
  feedbackCommand,
  listCommand,
  logCommand,
  pauseResumeCommand,
  resultCommand,
  statusCommand,
  watchCommand,
} from './inspect-commands';
import {
  APPLY_HELP,
  applyCommand,
  DIFF_HELP,
  diffCommand,
  DISCARD_HELP,
  discardCommand,
} from './review-commands';
import { preflight } from '../preflight/preflight';
import { ensureLocalRunStack } from './local-run-stack';
import { attachToRun, parseRunRequest, type RunFlags } from './run-command';
import { readTask } from './task-input';
import { MAX_TASK_BYTES } from '../shared/task-size';
import { portNumber, positiveInteger } from '../shared/option-numbers';
import { SCRIPTED_MODEL_HELP } from './scripted-model-command';
import { startRunWorkflow } from '../api/aca-client';
import { claimRunId } from '../api/claim-run-id';
import { recordStartedRun } from '../api/started-runs';
import { givenOrLatestRun } from './latest-run';
import { addCleanCommand } from './clean-command';
import { linkOverrides, type LinkFlags } from './link-flags';
import { withStackPorts, type StackPortFlags } from './stack-ports';
import type { LinkRequest } from '../api/linked-run';
import type { ValidRunRequest } from '../api/run-request';
import type { ApplyAllowances } from '../repo';
import { discardPreparedBatch, prepareEvalBatch } from '../eval/prepare-batch';
import {
  evalBatchControl,
  evalCommand,
  evalReportCommand,
  evalRequest,
  evalStatusCommand,
  type EvalFlags,
} from './eval-command';

const LATEST_RUN =
  'run id (default: the latest run started from this repository or folder, else with this ACA_HOME)';

const EXIT_CODES_HELP = `
Exit codes: 0 success, 1 run failed, 2 bad input, 3 Temporal or database unreachable,
4 cancelled or interrupted.`;

async function withClient<T>(config: AcaConfig, work: (aca: AcaClient) => Promise<T>): Promise<T> {
  const aca = await AcaClient.connect({ config });
  try {
    return await work(aca);
  } finally {
    await aca.close();
  }
}

/**
 * The `aca` command line: every command, argument and option defined once here, with the help
 * text generated from these definitions. Actions set `exitCode` rather than exiting, so the
 * caller decides what happens to the process.
 */
export function buildProgram(io: CliIO): { program: Command; exitCode: () => number } {
  let code: number = EXIT.success;
  const config = (): AcaConfig => loadConfig();
  const program = new Command('aca')
    .description('A durable autonomous coding agent on Temporal.')
    .addHelpText('after', EXIT_CODES_HELP)
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      // Help asked for wrongly (`aca memory`) goes to stderr; commander's error lines are
      // replaced by one `aca: …` line (see commanderExit).
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
      outputError: () => undefined,
    })
    .exitOverride();
  const set = (value: number): void => {
    code = value;
  };
  const json = () => new Option('--json', 'print one JSON object instead of text');
  /** A command on the run given, or on the latest one started here (see latest-run.ts). */
  const withRunOf = async (
    id: string | undefined,
    work: (aca: AcaClient, run: string) => Promise<number>,
  ) => {
    const cfg = config();
    const run = await givenOrLatestRun(id, cfg, io);
    return withClient(cfg, (aca) => work(aca, run));
  };

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
    .option('--detach', 'print the run id and return at once')
    .addOption(json())
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
      .option('--detach', 'print the new run id and return at once')
      .addOption(json());
  type LinkedFlags = LinkFlags & { id?: string; replace?: boolean; detach?: boolean; json?: boolean };
  const startLinked = (parentId: string, request: LinkRequest, flags: LinkedFlags) =>
    startAndFollow(
      config(),
      { detach: flags.detach === true, json: flags.json === true, replace: flags.replace === true },
      (aca) => aca.prepareLinked(parentId, { ...request, overrides: linkOverrides(flags) }, flags.id),
    );

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

  program
    .command('status')
    .description('state, iteration, pass rate, paused or not, last analysis')
    .argument('[id]', LATEST_RUN)
    .addOption(json())
    .action(async (id: string | undefined, flags: { json?: boolean }) => {
      set(await withRunOf(id, (aca, run) => statusCommand(aca, run, flags, io)));
    });

  program
    .command('watch')
    .description('live progress until the run ends')
    .argument('[id]', LATEST_RUN)
    .action(async (id: string | undefined) => {
      set(await withRunOf(id, (aca, run) => watchCommand(aca, run, io)));
    });

  for (const action of ['pause', 'resume'] as const) {
    program
      .command(action)
      .description(action === 'pause' ? 'pause a run: no new step starts' : 'resume a paused run')
      .argument('<id>', 'run id')
      .action(async (id: string) => {
        set(
          await withClient(
            config(),
            async (aca) =>
              (await evalBatchControl(aca, id, action, io)) ?? pauseResumeCommand(aca, id, io, action),
          ),
        );
      });
  }

  program
    .command('feedback')
    .description('guidance for the next Coder turn of a running run')
    .argument('<id>', 'run id')
    .argument('<text>', 'the guidance, as one quoted argument')
    .action(async (id: string, text: string) => {
      set(await withClient(config(), (aca) => feedbackCommand(aca, id, text, io)));
    });

  program
    .command('extend')
    .description('give a run waiting at its iteration limit (--on-limit ask) more attempts')
    .argument('<id>', 'run id')
    .option('--iterations <n>', 'how many more attempts')
    .option('--feedback <text>', 'guidance for its next Coder turn')
    .action(async (id: string, flags: { iterations?: string; feedback?: string }) => {
      set(await withClient(config(), (aca) => extendCommand(aca, id, flags, io)));
    });

  program
    .command('log')
    .description('the run as plain text: each agent step, its tool calls and outcomes, test counts, analyses')
    .argument('[id]', LATEST_RUN)
    .action(async (id: string | undefined) => {
      set(await withRunOf(id, (aca, run) => logCommand(aca, run, io)));
    });

  program
    .command('cancel')
    .description('cancel a run')
    .argument('<id>', 'run id')
    .action(async (id: string) => {
      set(
        await withClient(
          config(),
          async (aca) => (await evalBatchControl(aca, id, 'cancel', io)) ?? cancelCommand(aca, id, io),
        ),
      );
    });

  program
    .command('result')
    .description("the run's outcome; waits for the run to end")
    .argument('[id]', LATEST_RUN)
    .addOption(json())
    .option('--no-wait', 'show the current state of a run that has not ended instead of waiting')
    .action(async (id: string | undefined, flags: { json?: boolean; wait: boolean }) => {
      set(await withRunOf(id, (aca, run) => resultCommand(aca, run, flags, io)));
    });

  program
    .command('diff')
    .description("the run's changes against the commit it started from, as a unified diff")
    .argument('[id]', LATEST_RUN)
    .option('--stat', 'one line per changed file with its counts instead')
    .option('--raw', 'print the bytes as git wrote them, control characters and all (for pipes)')
    .addHelpText('after', DIFF_HELP)
    .action(async (id: string | undefined, flags: { stat?: boolean; raw?: boolean }) => {
      set(await withRunOf(id, (aca, run) => diffCommand(aca, run, flags, io)));
    });

  program
    .command('apply')
    .description("bring an ended --repo run's changes onto your current branch as one commit")
    .argument('<id>', 'run id')
    .option('--allow-binary', 'apply new binary files too (refused otherwise: the diff cannot show them)')
    .option(
      '--allow-links',
      'apply links that point outside the repository or into a git directory too (refused otherwise)',
    )
    .option('--allow-attributes', 'apply .gitattributes the run adds or changes too (refused otherwise)')
    .addHelpText('after', APPLY_HELP)
    .action(async (id: string, flags: ApplyAllowances) => {
      set(await withClient(config(), (aca) => applyCommand(aca, id, io, flags)));
    });

  program
    .command('discard')
    .description("remove an ended run's worktree and branch")
    .argument('<id>', 'run id')
    .option('--force', 'also when the changes were never applied, without asking')
    .addHelpText('after', DISCARD_HELP)
    .action(async (id: string, flags: { force?: boolean }) => {
      set(await withClient(config(), (aca) => discardCommand(aca, id, flags, io)));
    });

  addCleanCommand(program, async (work) => set(await withClient(config(), work)), io);

  program
    .command('list')
    .description('runs, newest first')
    .addOption(
      new Option('--state <state>', 'only runs in this state').argParser((value) => {
        const state = value.toUpperCase();
        if (!(LISTED_STATES as readonly string[]).includes(state)) {
          throw new UserInputError(`unknown state "${value}"; choose one of ${LISTED_STATES.join(', ')}`);
        }
        return state as ListedState;
      }),
    )
    .option('--parent <id>', 'only runs continued, retried or forked from this run')
    .addOption(json())
    .action(async (flags: { json?: boolean; state?: ListedState; parent?: string }) => {
      set(await withClient(config(), (aca) => listCommand(aca, flags, io)));
    });

  program
    .command('memory')
    .description('failure memory')
    .command('search')
    .description('the past failures most similar to a text')
    .argument('<text>', 'what to look for')
    .addOption(json())
    .action(async (text: string, flags: { json?: boolean }) => {
      const { memoryCommand } = await import('./memory-command');
      set(await memoryCommand(config(), text, flags, io));
    });

  program
    .command('worker')
    .description('run a worker for the task queue until SIGTERM or Ctrl-C')
    .action(async () => {
      const cfg = config();
      const refused = await preflight('worker', cfg, io);
      if (refused !== null) return set(refused);
      const { runWorker } = await import('../worker');
      await runWorker(cfg);
    });

  program
    .command('up')
    .description('start a local Temporal dev server and register the search attributes')
    .option('--port <n>', 'the Temporal server port (default 7233, or the one this ACA_HOME last used)')
    .option('--ui-port <n>', 'the Web UI port (default 8233)')
    .action(async (flags: StackPortFlags) => {
      const cfg = withStackPorts(config(), flags);
      const refused = await preflight('up', cfg, io);
      if (refused !== null) return set(refused);
      const { upCommand } = await import('./up-command');
      set(await upCommand(cfg, io));
    });

  program
    .command('demo')
    .description('run the built-in offline scenario end to end with a scripted model')
    .addOption(json())
    .option('--port <n>', 'the Temporal server port (default 7233, or the one this ACA_HOME last used)')
    .option('--ui-port <n>', 'the Web UI port (default 8233)')
    .action(async (flags: { json?: boolean } & StackPortFlags) => {
      const cfg = withStackPorts(config(), flags);
      const refused = await preflight('demo', cfg, io, { mayInstall: true });
      if (refused !== null) return set(refused);
      const { demoCommand } = await import('./demo-command');
      set(await demoCommand(cfg, flags, io));
    });

  program
    .command('scripted-model')
    .description("serve aca's scripted OpenAI-compatible model with your own scenarios")
    .option('--scenarios <dir>', 'a folder of scenario files (*.json), served beside the built-in ones')
    .option('--port <n>', 'port to listen on (default: any free one)')
    .addHelpText('after', SCRIPTED_MODEL_HELP)
    .action(async (flags: { scenarios?: string; port?: string }) => {
      const port = flags.port === undefined ? undefined : portNumber(flags.port);
      const { scriptedModelCommand } = await import('./scripted-model-command');
      set(
        await scriptedModelCommand(
          {
            ...(flags.scenarios !== undefined ? { scenarios: flags.scenarios } : {}),
            ...(port !== undefined ? { port } : {}),
          },
          io,
        ),
      );
    });

  program
    .command('doctor')
    .description('check this machine and the model endpoint')
    .addOption(json())
    .action(async (flags: { json?: boolean }) => {
      const { doctorCommand } = await import('./doctor-command');
      set(await doctorCommand(config(), flags, io));
    });

  const evalCommandLine = program
    .command('eval')
    .description('run the agent on SWE-bench-format instances and evaluate each (see docs/eval.md)')
    .argument('[instances]', 'the instances file: one SWE-bench instance (JSON) a line')
    .option(
      '--repos <dir>',
      'folder holding each repository as <owner>__<name> (a git repository) or <owner>__<name>.bundle',
    )
    .option(
      '--predictions <file|gold|empty>',
      "evaluate given patches without the agent: a predictions file, each instance's own patch (gold) or none (empty)",
    )
    .option('--model <name>', 'model name (ACA_MODEL)')
    .option('--concurrency <n>', 'instances in flight at once (4)')
    .option('--max-iterations <n>', "attempts of each instance's run (15)")
    .option(
      '--max-cost <usd>',
      "budget in dollars of the whole batch at the model's prices; no instance starts past it",
    )
    .option('--only <ids>', 'only these instances (comma-separated ids)')
    .option('--limit <n>', 'only the first N instances')
    .option('--id <batch>', 'workflow id of the batch')
    .option('--out <dir>', 'where predictions.jsonl and report.json go (ACA_HOME/evals/<batch>)')
    .option('--detach', 'print the batch id and return at once')
    .addOption(json())
    .action(async (file: string | undefined, flags: EvalFlags) => {
      const cfg = config();
      // Everything is checked (and the repositories copied) before anything is started.
      const prepared = await prepareEvalBatch(evalRequest(file, flags), cfg);
      let started = false;
      const stack = flags.detach ? null : await ensureLocalRunStack(cfg, io);
      try {
        set(
          await withClient(cfg, (aca) =>
            evalCommand(aca, cfg, prepared, flags, io, () => {
              started = true;
            }),
          ),
        );
      } catch (err) {
        // Nothing started: the same command may be given again with the same --id and --out.
        if (!started) discardPreparedBatch(prepared.input.outDir);
        throw err;
      } finally {
        await stack?.close();
      }
    });
  evalCommandLine
    .command('status')
    .description("a batch's progress: done, running, resolved, errors, cost")
    .argument('<batch>', 'batch id')
    .addOption(json())
    // `--json` after the batch id reaches `eval`'s own option of that name: read both.
    .action(async (id: string, _flags: unknown, command: Command) => {
      const flags = command.optsWithGlobals<{ json?: boolean }>();
      set(await withClient(config(), (aca) => evalStatusCommand(aca, id, flags, io)));
    });
  evalCommandLine
    .command('report')
    .description("a batch's report, once it has ended (waits for it)")
    .argument('<batch>', 'batch id')
    .addOption(json())
    .action(async (id: string, _flags: unknown, command: Command) => {
      const flags = command.optsWithGlobals<{ json?: boolean }>();
      set(await withClient(config(), (aca) => evalReportCommand(aca, id, flags, io)));
    });

  return { program, exitCode: () => code };
}
