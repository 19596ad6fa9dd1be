import type { AcaConfig } from '../config';
import { formatCheck, isBlocking } from '../preflight/check-result';
import { defaultHostCheckEnv } from '../preflight/host-checks';
import { checkModelEndpoint } from '../preflight/model-checks';
import { hostChecks } from '../preflight/preflight';
import { jsonForTerminal } from '../shared/terminal-text';
import { checkWorkers } from '../preflight/worker-check';
import { checkMcpServers } from '../preflight/mcp-check';
import { EXIT, type CliIO } from './cli-context';

/**
 * `aca doctor [--json]`: every preflight check, the MCP servers and the model endpoint, one line each.
 * Exit 0 when all pass, 3 when only services are unreachable, 2 otherwise.
 */
export async function doctorCommand(
  config: AcaConfig,
  flags: { json?: boolean },
  io: CliIO,
): Promise<number> {
  const results = [
    ...(await hostChecks('doctor', config, defaultHostCheckEnv())),
    ...[await checkWorkers(config)].filter((check) => check !== null),
    ...(await checkMcpServers(config)),
    ...(await checkModelEndpoint({
      baseURL: config.openaiBaseUrl,
      apiKey: config.openaiApiKey,
      model: config.model,
    })),
  ];
  const blocking = results.filter(isBlocking);
  if (flags.json) {
    io.out(jsonForTerminal({ ok: blocking.length === 0, checks: results }));
  } else {
    for (const result of results) io.out(formatCheck(result));
  }
  if (blocking.length === 0) return EXIT.success;
  return blocking.every((r) => r.status === 'unreachable') ? EXIT.unreachable : EXIT.badInput;
}
