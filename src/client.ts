import type { Client } from '@temporalio/client';
import { loadConfig, type AcaConfig } from './config';
import { AcaError, UserInputError } from './shared/errors';
import { EXIT, UnreachableError, connectClient, processIO, type CliIO } from './cli/cli-context';
import {
  cancelCommand,
  feedbackCommand,
  listCommand,
  pauseResumeCommand,
  resultCommand,
  statusCommand,
  watchCommand,
} from './cli/inspect-commands';
import { preflight } from './preflight/preflight';
import { attachToRun, parseRunRequest, runLink, startRun } from './cli/run-command';

const USAGE = `aca: a durable autonomous coding agent on Temporal

Usage:
  aca run "<task>" [--language python|typescript|javascript] [--workspace DIR] [--tests DIR]
                   [--max-iterations N] [--warn-at N] [--max-tokens N] [--model NAME] [--id ID]
                   [--detach] [--json]
  aca status <id> [--json]        aca watch <id>           aca result <id> [--json] [--no-wait]
  aca pause <id>                  aca resume <id>          aca cancel <id>
  aca feedback <id> "<text>"      aca list [--state STATE] [--json]
  aca memory search "<text>" [--json]
  aca worker                      aca up                   aca demo
  aca doctor [--json]             (checks this machine and the model endpoint)
  aca bench [part ...] [options]  (see \`aca bench --help\`)

Exit codes: 0 success, 1 run failed, 2 bad input, 3 Temporal or database unreachable, 4 cancelled or interrupted.`;

async function withClient<T>(config: AcaConfig, work: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient(config);
  try {
    return await work(client);
  } finally {
    await client.connection.close();
  }
}

async function dispatch(command: string, rest: string[], io: CliIO): Promise<number> {
  const config = loadConfig();
  switch (command) {
    case 'run': {
      // Validate everything before touching the network, so bad input starts nothing.
      const request = parseRunRequest(rest, config);
      return withClient(config, async (client) => {
        await startRun(client, config, request);
        if (request.detach) {
          io.out(request.workflowId);
          return EXIT.success;
        }
        if (!request.json) {
          io.err(`Started ${request.workflowId} (workspace ${request.input.workspace})`);
          io.err(`Web UI: ${runLink(config, request.workflowId)}`);
        }
        return attachToRun(client, config, request.workflowId, io, {
          json: request.json,
          interruptPauses: true,
        });
      });
    }
    case 'status':
      return withClient(config, (client) => statusCommand(client, rest, io));
    case 'watch':
      return withClient(config, (client) => watchCommand(client, config, rest, io));
    case 'pause':
    case 'resume':
      return withClient(config, (client) => pauseResumeCommand(client, rest, io, command));
    case 'feedback':
      return withClient(config, (client) => feedbackCommand(client, rest, io));
    case 'cancel':
      return withClient(config, (client) => cancelCommand(client, rest, io));
    case 'result':
      return withClient(config, (client) => resultCommand(client, config, rest, io));
    case 'list':
      return withClient(config, (client) => listCommand(client, rest, io));
    case 'memory': {
      if (rest[0] !== 'search') throw new UserInputError('usage: aca memory search "<text>" [--json]');
      const { memoryCommand } = await import('./cli/memory-command');
      return memoryCommand(config, rest.slice(1), io);
    }
    case 'worker': {
      const refused = await preflight('worker', config, io);
      if (refused !== null) return refused;
      const { runWorker } = await import('./worker');
      await runWorker(config);
      return EXIT.success;
    }
    case 'up': {
      const refused = await preflight('up', config, io);
      if (refused !== null) return refused;
      const { upCommand } = await import('./cli/up-command');
      return upCommand(config, io);
    }
    case 'demo': {
      const refused = await preflight('demo', config, io, { mayInstall: true });
      if (refused !== null) return refused;
      const { demoCommand } = await import('./cli/demo-command');
      return demoCommand(config, rest, io);
    }
    case 'doctor': {
      const { doctorCommand } = await import('./cli/doctor-command');
      return doctorCommand(config, rest, io);
    }
    case 'bench': {
      const { benchCommand } = await import('./bench/bench-command');
      return benchCommand(rest, io);
    }
    case 'help':
    case '--help':
    case '-h':
      io.out(USAGE);
      return EXIT.success;
    default:
      throw new UserInputError(`unknown command "${command}"; see \`aca help\``);
  }
}

/** Entry point of the `aca` command; returns the exit code. */
export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const [command, ...rest] = argv;
  if (!command) {
    io.err(USAGE);
    return EXIT.badInput;
  }
  try {
    return await dispatch(command, rest, io);
  } catch (err) {
    if (err instanceof UserInputError) {
      io.err(`aca: ${err.message}`);
      return EXIT.badInput;
    }
    if (err instanceof UnreachableError) {
      io.err(`aca: ${err.message}`);
      return EXIT.unreachable;
    }
    const message = err instanceof AcaError || err instanceof Error ? err.message : String(err);
    io.err(`aca: ${message}`);
    return EXIT.failed;
  }
}
