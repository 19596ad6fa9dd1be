import { Command } from 'commander';
import { discardPreparedBatch, prepareEvalBatch } from '../eval/prepare-batch';
import {
  evalCommand,
  evalReportCommand,
  evalRequest,
  evalStatusCommand,
  type EvalFlags,
} from './eval-command';
import { ensureLocalRunStack } from './local-run-stack';
import { jsonOption, withClient, type ProgramContext } from './program-context';

/** `aca eval` and its `status` and `report` (docs/eval.md). */
export function addEvalCommands(program: Command, ctx: ProgramContext): void {
  const { io, config, set } = ctx;
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
    .option(
      '--specs <file>',
      "JSON object keyed by owner/name: each repository's testCommand, setupCommand and env",
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
    .addOption(jsonOption())
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
    .addOption(jsonOption())
    // `--json` after the batch id reaches `eval`'s own option of that name: read both.
    .action(async (id: string, _flags: unknown, command: Command) => {
      const flags = command.optsWithGlobals<{ json?: boolean }>();
      set(await withClient(config(), (aca) => evalStatusCommand(aca, id, flags, io)));
    });
  evalCommandLine
    .command('report')
    .description("a batch's report, once it has ended (waits for it)")
    .argument('<batch>', 'batch id')
    .addOption(jsonOption())
    .action(async (id: string, _flags: unknown, command: Command) => {
      const flags = command.optsWithGlobals<{ json?: boolean }>();
      set(await withClient(config(), (aca) => evalReportCommand(aca, id, flags, io)));
    });
}
