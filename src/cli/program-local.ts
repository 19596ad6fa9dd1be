import { Command } from 'commander';
import { preflight } from '../preflight/preflight';
import { portNumber } from '../shared/option-numbers';
import { jsonOption, type ProgramContext } from './program-context';
import { SCRIPTED_MODEL_HELP } from './scripted-model-command';
import { withStackPorts, type StackPortFlags } from './stack-ports';

/** The commands about this machine: memory, worker, up, demo, scripted-model, doctor. */
export function addLocalCommands(program: Command, ctx: ProgramContext): void {
  const { io, config, set } = ctx;
  program
    .command('memory')
    .description('failure memory')
    .command('search')
    .description('the past failures most similar to a text')
    .argument('<text>', 'what to look for')
    .addOption(jsonOption())
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
    .addOption(jsonOption())
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
    .addOption(jsonOption())
    .action(async (flags: { json?: boolean }) => {
      const { doctorCommand } = await import('./doctor-command');
      set(await doctorCommand(config(), flags, io));
    });
}
